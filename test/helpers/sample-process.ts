import { readFileSync } from 'node:fs';

/**
 * Memory and CPU of a running flashlog process, read from outside: resident memory and CPU time
 * from /proc/<pid>, the JavaScript heap and external memory from its Prometheus /metrics (prom-client's
 * default process metrics). Used by `npm run soak` and the memory chaos scenario.
 */
export interface ProcessSample {
  /** Seconds since sampling started. */
  readonly atS: number;
  readonly rssMiB: number;
  /**
   * The part of RSS that is the process's own memory (RssAnon: heaps, EDR, SQLite's cache). The
   * rest is file-backed (RssFile: code, and the embedded log's memory-mapped SQLite file, which
   * grows with the log and which the kernel may drop at any time) or shared memory.
   */
  readonly anonMiB: number;
  readonly fileMiB: number;
  /**
   * EDR's native memory: the resident anonymous pages of its allocator's arenas (EDR, a Rust addon,
   * allocates with mimalloc, which reserves its memory in anonymous mappings of exactly 1 GiB; nothing
   * else in the process maps that size). The devnet's chain and the executor's forks live there.
   */
  readonly edrMiB: number;
  /** V8 heap in use, MiB (NaN without /metrics). */
  readonly heapMiB: number;
  /** V8 heap committed (in use, garbage not yet collected, the young generation's reserve), MiB. */
  readonly heapTotalMiB: number;
  /** Memory V8 is told about outside its heap (Buffers, native addons that report it), MiB. */
  readonly externalMiB: number;
  /** user + system CPU seconds since the process started. */
  readonly cpuS: number;
}

const CLOCK_TICKS = 100;
const ARENA_KIB = 1024 * 1024;

/** Resident anonymous KiB in the 1 GiB anonymous mappings (mimalloc's arenas, see edrMiB). */
function arenaMiB(pid: number): number {
  try {
    const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
    let inArena = false;
    let kib = 0;
    for (const line of smaps.split('\n')) {
      const range = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(\S*)/.exec(line);
      if (range) {
        const sizeKib = (parseInt(range[2]!, 16) - parseInt(range[1]!, 16)) / 1024;
        inArena = sizeKib === ARENA_KIB && range[3] === '0' && range[4] === '';
      } else if (inArena && line.startsWith('Anonymous:')) kib += Number(line.split(/\s+/)[1]);
    }
    return kib / 1024;
  } catch {
    return Number.NaN;
  }
}

function procFigures(pid: number): { rssMiB: number; anonMiB: number; fileMiB: number; cpuS: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    const anon = /^RssAnon:\s+(\d+)\s+kB/m.exec(status);
    const file = /^RssFile:\s+(\d+)\s+kB/m.exec(status);
    // Fields after the command name (which may hold spaces) are split by spaces: utime is 14th, stime 15th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuS = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    const mib = (match: RegExpExecArray | null) => (match ? Number(match[1]) / 1024 : Number.NaN);
    return rss ? { rssMiB: mib(rss), anonMiB: mib(anon), fileMiB: mib(file), cpuS } : null;
  } catch {
    return null;
  }
}

async function metricsFigures(metricsUrl: string | undefined): Promise<{ heapMiB: number; heapTotalMiB: number; externalMiB: number }> {
  if (!metricsUrl) return { heapMiB: Number.NaN, heapTotalMiB: Number.NaN, externalMiB: Number.NaN };
  try {
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) })).text();
    const value = (name: string) => {
      const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
      return match ? Number(match[1]) / 2 ** 20 : Number.NaN;
    };
    return {
      heapMiB: value('flashlog_nodejs_heap_size_used_bytes'),
      heapTotalMiB: value('flashlog_nodejs_heap_size_total_bytes'),
      externalMiB: value('flashlog_nodejs_external_memory_bytes'),
    };
  } catch {
    return { heapMiB: Number.NaN, heapTotalMiB: Number.NaN, externalMiB: Number.NaN };
  }
}

/** One sample of `pid` (null once it is gone). */
export async function sampleProcess(pid: number, metricsUrl: string | undefined, startedAt: number): Promise<ProcessSample | null> {
  const proc = procFigures(pid);
  if (!proc) return null;
  const metrics = await metricsFigures(metricsUrl);
  return { atS: (Date.now() - startedAt) / 1000, ...proc, edrMiB: arenaMiB(pid), ...metrics };
}

/** Least-squares slope of `value` over `atS`, per minute. */
export function slopePerMinute(samples: readonly ProcessSample[], value: (sample: ProcessSample) => number): number {
  return leastSquaresSlope(samples.map((sample) => [sample.atS / 60, value(sample)] as const).filter(([, y]) => Number.isFinite(y)));
}

/** Least-squares slope of y over x (NaN for fewer than two points or a single x). */
function leastSquaresSlope(points: readonly (readonly [x: number, y: number])[]): number {
  if (points.length < 2) return Number.NaN;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}
