/**
 * `npm run soak [-- --minutes N] [-- --only run-devnet,devnet,...] [-- --parallel]`: each long-running
 * command as a real process under load for N minutes (10 by default), one after the other, or all
 * at once with --parallel (faster, but they share the CPU: the load average is in the table). Every 10 s it samples
 * the command's resident memory and CPU (/proc) and its JavaScript heap (/metrics), and at the end
 * prints one row per command: RSS and heap at start, after warm-up and at the end, the slope of RSS
 * and heap in MB per minute after warm-up (least squares), and CPU in % of one core after warm-up.
 * Goal: every slope under 5 MB/min ("flat": the heap slope, and the RSS slope or the RSS floor's
 * slope, see floorSlope). Results and samples also go to bench/results/soak.json and soak.md.
 *
 * Warm-up is the first fifth of the run, at least 60 s. The local executor re-forks about once a
 * minute (src/execute/local.ts), so its RSS is a saw-tooth: read the slope over several minutes.
 *
 * Comparisons run only when named in --only: `devnet-edr-cache`, `run-devnet-edr-cache` and
 * `run-devnet-30-edr-cache` are `devnet`, `run-devnet` and `run-devnet-30` with EDR's own state
 * cache bound instead of flashlog's (before/after the fix of issue 19, side by side:
 * `--only devnet,devnet-edr-cache,run-devnet,run-devnet-edr-cache,run-devnet-30,run-devnet-30-edr-cache --parallel`);
 * `run-devnet-30-metadata` and `run-devnet-30-no-execute` are `run-devnet-30` without the local
 * executor (receipts from the devnet's flashblock metadata; no execution), to measure it on its own;
 * `run-devnet-30-semi16` caps V8's young generation (NODE_OPTIONS=--max-semi-space-size=16).
 * `devnet-1s-history` and `run-devnet-30-history` add the bounded history (--devnet-history-blocks
 * 256), beside `devnet-1s` and `run-devnet-30`.
 *
 * `--baseline REF` adds, for each chosen `run --devnet` scenario, the same command from the code of
 * REF (a commit, copied once into bench/.cache/baseline-<sha>), named `<scenario>@<sha>`: before and
 * after in one run, side by side (`--only run-devnet,run-devnet-30 --baseline main --parallel`).
 *
 * Besides RSS and its own part (RssAnon), each row splits the own memory into EDR's native memory
 * (its allocator's arenas: the devnet's chain, the executor's forks; see test/helpers/sample-process.ts) and V8's
 * committed heap (what V8 holds, in use or not yet collected).
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { topics } from '../src/records/topics.ts';
import { zeroHash } from '../src/prover/enclave/core.ts';
import { proofRequestToWire } from '../src/prover/request.ts';
import { startEdrChain } from '../test/helpers/edr-chain.ts';
import { spawnFlashlog, type FlashlogProcess } from '../test/helpers/flashlog-process.ts';
import { buildHeaderChain, serveHeaderChain } from '../test/helpers/header-chain.ts';
import { sampleProcess, slopePerMinute, type ProcessSample } from '../test/helpers/sample-process.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    only: { type: 'string' },
    'sample-s': { type: 'string', default: '10' },
    parallel: { type: 'boolean', default: false },
    baseline: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
const minutes = Number(values.minutes);
const sampleMs = Number(values['sample-s']) * 1000;
if (!(minutes > 0)) throw new Error(`--minutes: expected a positive number, got ${values.minutes}`);

/**
 * The flashlog code of `ref` (a plain copy of the commit's files made once with `git archive` into
 * bench/.cache/baseline-<sha>, node_modules linked), for before/after side by side in one run.
 */
function baselineTree(ref: string): { binPath: string; sha: string } {
  const repo = fileURLToPath(new URL('..', import.meta.url));
  const sha = execFileSync('git', ['-C', repo, 'rev-parse', '--short=12', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
  const root = join(repo, 'bench', '.cache', `baseline-${sha}`);
  if (!existsSync(join(root, 'bin'))) {
    mkdirSync(root, { recursive: true });
    execFileSync('sh', ['-c', 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"', repo, sha, root], { stdio: 'ignore' });
  }
  if (!existsSync(join(root, 'node_modules'))) symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  return { binPath: join(root, 'bin', 'flashlog.js'), sha };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Starts a flashlog command, waits for `ready`, and returns it with its metrics URL. */
async function start(
  args: readonly string[],
  ready: string,
  env: Record<string, string> = {},
  binPath?: string,
): Promise<{ proc: FlashlogProcess; metricsUrl: string | undefined; line: Record<string, unknown> }> {
  const proc = spawnFlashlog(args, { FLASHLOG_LOG_LEVEL: 'info', ...env }, binPath);
  const metrics = args.includes('--no-metrics') ? undefined : await proc.waitFor((line) => line.msg === 'metrics listening', 60_000);
  const line = await proc.waitFor((candidate) => candidate.msg === ready, 120_000);
  return { proc, metricsUrl: metrics ? String(metrics.url) : undefined, line };
}

interface Scenario {
  readonly name: string;
  readonly load: string;
  /** Run only when named in --only (comparisons, not commands a user runs). */
  readonly onRequest?: boolean;
  /** The same scenario on another tree's bin/flashlog.js (--baseline), where it has one. */
  readonly on?: (binPath: string, name: string) => Scenario;
  /** Starts helpers and the measured process; returns it and a stop for everything. */
  setup(dir: string): Promise<{ measured: { proc: FlashlogProcess; metricsUrl: string | undefined }; stop(): Promise<void> }>;
}

/** SIGTERM, then SIGKILL after 20 s (said on stderr: a command that does not stop is a finding). */
async function stopAll(procs: readonly FlashlogProcess[]): Promise<void> {
  for (const proc of [...procs].reverse()) {
    const stopped = await Promise.race([proc.stop().then(() => true), sleep(20_000).then(() => false)]);
    if (!stopped) {
      process.stderr.write(`  ${proc.child.spawnargs.slice(2, 3).join(' ')} did not exit within 20 s of SIGTERM; killed\n`);
      await proc.stop('SIGKILL');
    }
  }
}

async function devnetHelper(extra: readonly string[] = []) {
  const { proc, line } = await start(['devnet', '--devnet-port', '0', '--devnet-ws-port', '0', '--no-metrics', ...extra], 'devnet started');
  return { proc, rpc: String(line.rpc), ws: String(line.ws) };
}

/** `run --devnet` with `extra` arguments (and environment), as one scenario. */
function runDevnet(
  name: string,
  load: string,
  extra: readonly string[],
  options: { env?: Record<string, string>; onRequest?: boolean; binPath?: string; ready?: string } = {},
): Scenario {
  return {
    name,
    load,
    // A comparison runs alone; a command a user runs also runs from a baseline tree.
    ...(options.onRequest
      ? { onRequest: true }
      : { on: (binPath: string, otherName: string) => runDevnet(otherName, `${load}, baseline tree`, extra, { ...options, binPath }) }),
    async setup(dir) {
      const run = await start(
        ['run', '--devnet', ...extra, '--port', '0', '--metrics-port', '0', '--data-dir', dir],
        options.ready ?? 'upstream connected',
        options.env,
        options.binPath,
      );
      return { measured: run, stop: () => stopAll([run.proc]) };
    },
  };
}

/** `flashlog devnet --load 30` alone, with more arguments. */
function devnetAlone(
  name: string,
  load: string,
  args: readonly string[],
  options: { env?: Record<string, string>; onRequest?: boolean } = {},
): Scenario {
  return {
    name,
    load,
    ...(options.onRequest ? { onRequest: true } : {}),
    async setup() {
      const devnet = await start(
        ['devnet', '--load', '30', ...args, '--devnet-port', '0', '--devnet-ws-port', '0', '--metrics-port', '0'],
        'devnet started',
        options.env,
      );
      return { measured: devnet, stop: () => stopAll([devnet.proc]) };
    },
  };
}

const scenarios: Scenario[] = [
  runDevnet('run-devnet', 'run --devnet (defaults: load 10 tx/s, state diff as default)', []),
  // The README's first command: Base after Denim (200 ms blocks through the blocks source)
  runDevnet('run-devnet-denim', 'run --devnet --denim (defaults: load 10 tx/s)', ['--denim'], { ready: 'gateway listening' }),
  runDevnet('run-devnet-idle', 'run --devnet --load 0 (no transactions)', ['--load', '0']),
  runDevnet('run-devnet-30', 'run --devnet --load 30 (the memory chaos scenario, for longer)', ['--load', '30']),
  // Suspects on their own (issue 19): the same process without the local executor (receipts from
  // the devnet's flashblock metadata instead, or no execution at all).
  runDevnet(
    'run-devnet-30-metadata',
    'run --devnet --load 30 --metadata-receipts (metadata executor, no EDR fork)',
    ['--load', '30', '--metadata-receipts'],
    { onRequest: true },
  ),
  runDevnet(
    'run-devnet-30-no-execute',
    'run --devnet --load 30 --no-execute (no executor, no canonical heads)',
    ['--load', '30', '--no-execute'],
    { onRequest: true },
  ),
  // V8's young generation: Node 24 lets it grow to 128 MB (two 64 MB semi-spaces) under a high
  // allocation rate; the flag caps it (a V8 flag at start only: NODE_OPTIONS, not settable at run time).
  runDevnet('run-devnet-30-semi16', 'run --devnet --load 30, NODE_OPTIONS=--max-semi-space-size=16', ['--load', '30'], {
    env: { NODE_OPTIONS: '--max-semi-space-size=16' },
    onRequest: true,
  }),
  devnetAlone('devnet', 'devnet --load 30', []),
  // Before/after, side by side: the same commands with EDR's own state cache bound (100,000 states,
  // in effect none) instead of the devnet's and the executor's (src/execute/edr.ts, withMaxCachedStates).
  devnetAlone('devnet-edr-cache', 'devnet --load 30, EDR default state cache (__EDR_MAX_CACHED_STATES=100000)', [], {
    env: { __EDR_MAX_CACHED_STATES: '100000' },
    onRequest: true,
  }),
  // The bounded history (--devnet-history-blocks, off by default) against the same devnet without
  // it, at 1 s blocks so that 256 blocks (the least bound) roll over about every 4 minutes.
  devnetAlone('devnet-1s', 'devnet --load 30 --block-time-ms 1000', ['--block-time-ms', '1000'], { onRequest: true }),
  devnetAlone(
    'devnet-1s-history',
    'devnet --load 30 --block-time-ms 1000 --devnet-history-blocks 256',
    ['--block-time-ms', '1000', '--devnet-history-blocks', '256'],
    { onRequest: true },
  ),
  // The issue's own command with the bounded history, against `run-devnet-30`: the devnet, the
  // local executor's forks of it (which read on across each rollover), the log and the gateway in
  // one process. `run` keeps 2 s blocks, so 256 blocks roll over about every 8.5 minutes.
  runDevnet(
    'run-devnet-30-history',
    'run --devnet --load 30 --devnet-history-blocks 256',
    ['--load', '30', '--devnet-history-blocks', '256'],
    {
      onRequest: true,
    },
  ),
  runDevnet(
    'run-devnet-30-edr-cache',
    'run --devnet --load 30, EDR default state cache (__EDR_MAX_CACHED_STATES=100000)',
    ['--load', '30'],
    {
      env: { __EDR_MAX_CACHED_STATES: '100000' },
      onRequest: true,
    },
  ),
  runDevnet('run-devnet-edr-cache', 'run --devnet (load 10), EDR default state cache (__EDR_MAX_CACHED_STATES=100000)', [], {
    env: { __EDR_MAX_CACHED_STATES: '100000' },
    onRequest: true,
  }),
  {
    name: 'ingest-local',
    load: 'ingest --executor local, devnet --load 30 (separate process)',
    async setup(dir) {
      const devnet = await devnetHelper(['--load', '30']);
      const ingest = await start(
        ['ingest', '--ws', devnet.ws, '--rpc', devnet.rpc, '--executor', 'local', '--metrics-port', '0', '--data-dir', dir],
        'ingest started',
      );
      return { measured: ingest, stop: () => stopAll([devnet.proc, ingest.proc]) };
    },
  },
  {
    name: 'serve',
    load: 'serve on a growing log (devnet --load 30 --metadata-receipts, ingest), 20 JSON-RPC calls/s',
    async setup(dir) {
      const devnet = await devnetHelper(['--load', '30', '--metadata-receipts']);
      const ingest = await start(
        ['ingest', '--ws', devnet.ws, '--rpc', devnet.rpc, '--executor', 'metadata', '--no-metrics', '--data-dir', dir],
        'ingest started',
      );
      const serve = await start(
        ['serve', '--source', 'flashblocks', '--rpc', devnet.rpc, '--port', '0', '--metrics-port', '0', '--data-dir', dir],
        'gateway listening',
      );
      const url = String(serve.line.url);
      let stopped = false;
      const calls = [
        { method: 'eth_getBlockByNumber', params: ['pending', true] },
        { method: 'eth_getTransactionCount', params: ['0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', 'pending'] },
        { method: 'eth_getLogs', params: [{ fromBlock: 'pending', toBlock: 'pending' }] },
        { method: 'eth_blockNumber', params: [] },
      ];
      const client = (async () => {
        for (let i = 0; !stopped; i++) {
          const call = calls[i % calls.length]!;
          await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: i, ...call }),
          })
            .then((response) => response.text())
            .catch(() => undefined);
          await sleep(50);
        }
      })();
      return {
        measured: serve,
        stop: async () => {
          stopped = true;
          await client;
          await stopAll([devnet.proc, ingest.proc, serve.proc]);
        },
      };
    },
  },
  {
    name: 'prover-bridge',
    load: 'prover-bridge, one proof request every 5 s (enclave local mode, prover-host)',
    async setup(dir) {
      const l2Blocks = buildHeaderChain({ length: 30, seed: `soak-${randomUUID().slice(0, 8)}` });
      const [l1, l2] = await Promise.all([startEdrChain(), serveHeaderChain(l2Blocks, 1337)]);
      const head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: `0x${string}`; number: `0x${string}` };
      const enclave = await start(
        ['enclave', '--listen', 'tcp://127.0.0.1:0', '--no-metrics', '--prove-delay-ms', '200'],
        'enclave listening',
      );
      const enclaveUrl = String(enclave.line.listen);
      const host = await start(
        ['prover-host', '--l1-rpc', l1.url, '--l2-rpc', l2.url, '--enclave', enclaveUrl, '--port', '0', '--no-metrics'],
        'prover host listening',
      );
      const bridge = await start(
        ['prover-bridge', '--prover-url', String(host.line.url), '--metrics-port', '0', '--data-dir', dir],
        'prover bridge consuming',
      );
      const log = createEmbeddedLog({ path: join(dir, 'flashlog.db') });
      let stopped = false;
      const producer = (async () => {
        for (let i = 0; !stopped; i++) {
          const claimed = 1 + (i % 28);
          const requestId = randomUUID();
          const request = {
            l1Head: head.hash,
            agreedL2HeadHash: l2Blocks[claimed - 1]!.hash,
            agreedL2OutputRoot: l2Blocks[claimed - 1]!.outputRoot,
            claimedL2OutputRoot: l2Blocks[claimed]!.outputRoot,
            claimedL2BlockNumber: claimed,
            proposer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as const,
            intermediateBlockInterval: 1,
            l1HeadNumber: Number(BigInt(head.number)),
            imageHash: zeroHash,
          };
          await log.produce([
            {
              topic: topics.proofRequests,
              key: requestId,
              value: JSON.stringify({ v: 1, requestId, replyTopic: topics.proofReplies, request: proofRequestToWire(request) }),
            },
          ]);
          await sleep(5000);
        }
      })();
      return {
        measured: bridge,
        stop: async () => {
          stopped = true;
          await producer;
          await stopAll([enclave.proc, host.proc, bridge.proc]);
          await log.close();
          await l2.close();
          await l1.close();
        },
      };
    },
  },
];

interface Row {
  command: string;
  load: string;
  'rss start': number;
  'rss warm': number;
  'rss end': number;
  'rss MB/min': number;
  'heap start': number;
  'heap warm': number;
  'heap end': number;
  'heap MB/min': number;
  /** Growth of the lowest RSS: second half after warm-up against the first half, per minute. */
  'rss floor MB/min': number;
  /** The process's own memory (RssAnon), without the file-backed part (the log's mapped file). */
  'anon warm': number;
  'anon end': number;
  'anon MB/min': number;
  /** EDR's native memory (its allocator's arenas: the devnet's chain, the executor's forks). */
  'edr warm': number;
  'edr end': number;
  'edr MB/min': number;
  /** V8's heap committed: in use, garbage not yet collected, the young generation. */
  'v8 committed warm': number;
  'v8 committed end': number;
  'cpu %core': number;
  /** The machine's 1-minute load average at the end (2 cores). */
  'load avg': number;
  verdict: string;
}

/**
 * The slope of the RSS floor after warm-up: from the lowest sample of the first half to the lowest
 * of the second half. The local executor's saw-tooth
 * (a fork grows for ~1 min, then is replaced) makes a least-squares slope over a few minutes swing
 * by tens of MB/min with the phase; what it keeps for good shows in the floor.
 */
function floorSlope(afterWarm: readonly ProcessSample[]): number {
  if (afterWarm.length < 4) return Number.NaN;
  const middle = (afterWarm[0]!.atS + afterWarm.at(-1)!.atS) / 2;
  const first = afterWarm.filter((sample) => sample.atS < middle);
  const second = afterWarm.filter((sample) => sample.atS >= middle);
  const lowest = (samples: readonly ProcessSample[]) => samples.reduce((low, sample) => (sample.rssMiB < low.rssMiB ? sample : low));
  const [low1, low2] = [lowest(first), lowest(second)];
  return (low2.rssMiB - low1.rssMiB) / ((low2.atS - low1.atS) / 60);
}

const round = (value: number) => Math.round(value * 10) / 10;

async function soak(scenario: Scenario): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), `flashlog-soak-${scenario.name}-`));
  process.stderr.write(`soak ${scenario.name}: ${scenario.load}, ${minutes} min\n`);
  const { measured, stop } = await scenario.setup(dir);
  const pid = measured.proc.child.pid!;
  const startedAt = Date.now();
  const samples: ProcessSample[] = [];
  const durationMs = minutes * 60_000;
  const warmMs = Math.max(60_000, durationMs / 5);
  try {
    for (;;) {
      const sample = await sampleProcess(pid, measured.metricsUrl, startedAt);
      if (!sample) throw new Error(`${scenario.name}: the process exited`);
      samples.push(sample);
      process.stderr.write(
        `  ${scenario.name} ${sample.atS.toFixed(0)} s: rss ${sample.rssMiB.toFixed(0)} MB (own ${sample.anonMiB.toFixed(0)}: EDR ${sample.edrMiB.toFixed(0)}, V8 ${sample.heapTotalMiB.toFixed(0)}; file ${sample.fileMiB.toFixed(0)}), heap in use ${sample.heapMiB.toFixed(0)} MB\n`,
      );
      if (Date.now() - startedAt >= durationMs) break;
      await sleep(Math.min(sampleMs, startedAt + durationMs - Date.now()));
    }
  } finally {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const warmIndex = samples.findIndex((sample) => sample.atS * 1000 >= warmMs);
  const afterWarm = samples.slice(Math.max(0, warmIndex));
  const first = samples[0]!;
  const warm = afterWarm[0]!;
  const last = samples.at(-1)!;
  const rssSlope = slopePerMinute(afterWarm, (sample) => sample.rssMiB);
  const heapSlope = slopePerMinute(afterWarm, (sample) => sample.heapMiB);
  const cpu = (100 * (last.cpuS - warm.cpuS)) / Math.max(1, last.atS - warm.atS);
  const floor = floorSlope(afterWarm);
  allSamples[scenario.name] = samples;
  return {
    command: scenario.name,
    load: scenario.load,
    'rss start': round(first.rssMiB),
    'rss warm': round(warm.rssMiB),
    'rss end': round(last.rssMiB),
    'rss MB/min': round(rssSlope),
    'heap start': round(first.heapMiB),
    'heap warm': round(warm.heapMiB),
    'heap end': round(last.heapMiB),
    'heap MB/min': round(heapSlope),
    'rss floor MB/min': round(floor),
    'anon warm': round(warm.anonMiB),
    'anon end': round(last.anonMiB),
    'anon MB/min': round(slopePerMinute(afterWarm, (sample) => sample.anonMiB)),
    'edr warm': round(warm.edrMiB),
    'edr end': round(last.edrMiB),
    'edr MB/min': round(slopePerMinute(afterWarm, (sample) => sample.edrMiB)),
    'v8 committed warm': round(warm.heapTotalMiB),
    'v8 committed end': round(last.heapTotalMiB),
    'cpu %core': round(cpu),
    'load avg': round(loadavg()[0]!),
    verdict: (rssSlope < 5 || floor < 5) && heapSlope < 5 ? 'flat' : 'GROWS',
  };
}

if (values.help) {
  process.stdout.write(`npm run soak -- [options]: each long-running command under load, its memory and CPU over time

  --minutes N     minutes per command (default 10); warm-up is the first fifth, at least 60 s
  --only a,b      only these scenarios; comparisons run only when named here:
${scenarios.map((each) => `                    ${each.name}: ${each.load}`).join('\n')}
  --parallel      all at once (faster; they share the CPU, the load average is in the table)
  --sample-s N    seconds between samples (default 10)
  --baseline REF  also each chosen run --devnet scenario from the code of commit REF, side by side
  -h, --help      this text

Results: a table on stdout, and bench/results/soak.json and soak.md. Goal: every slope under 5 MB/min.
`);
  process.exit(0);
}

const only = values.only?.split(',');
const rows: Row[] = [];
const allSamples: Record<string, ProcessSample[]> = {};
/** One scenario's row, or a FAILED row saying so. */
async function soakOrFail(scenario: Scenario): Promise<Row> {
  try {
    return await soak(scenario);
  } catch (error) {
    process.stderr.write(`soak ${scenario.name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return {
      command: scenario.name,
      load: scenario.load,
      'rss start': NaN,
      'rss warm': NaN,
      'rss end': NaN,
      'rss MB/min': NaN,
      'heap start': NaN,
      'heap warm': NaN,
      'heap end': NaN,
      'heap MB/min': NaN,
      'rss floor MB/min': NaN,
      'anon warm': NaN,
      'anon end': NaN,
      'anon MB/min': NaN,
      'edr warm': NaN,
      'edr end': NaN,
      'edr MB/min': NaN,
      'v8 committed warm': NaN,
      'v8 committed end': NaN,
      'cpu %core': NaN,
      'load avg': NaN,
      verdict: 'FAILED',
    };
  }
}
const chosen = scenarios.filter((candidate) => (only ? only.includes(candidate.name) : !candidate.onRequest));
if (values.baseline) {
  const { binPath, sha } = baselineTree(values.baseline);
  chosen.push(...chosen.flatMap((scenario) => (scenario.on ? [scenario.on(binPath, `${scenario.name}@${sha.slice(0, 7)}`)] : [])));
}
if (values.parallel) rows.push(...(await Promise.all(chosen.map(soakOrFail))));
else for (const scenario of chosen) rows.push(await soakOrFail(scenario));
const columns = Object.keys(rows[0] ?? {}) as (keyof Row)[];
const markdown = [
  `# flashlog soak: ${minutes} min per command, ${new Date().toISOString()}`,
  '',
  'Memory in MB (MiB): resident (rss) and JavaScript heap in use; slopes after warm-up (least squares, and of the RSS floor); CPU after warm-up in % of one core.',
  '',
  `| ${columns.join(' | ')} |`,
  `| ${columns.map(() => '---').join(' | ')} |`,
  ...rows.map((row) => `| ${columns.map((column) => String(row[column])).join(' | ')} |`),
  '',
].join('\n');
const out = fileURLToPath(new URL('../bench/results/', import.meta.url));
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'soak.json'), `${JSON.stringify({ at: new Date().toISOString(), minutes, rows, samples: allSamples }, null, 2)}\n`);
writeFileSync(join(out, 'soak.md'), markdown);
process.stdout.write(`${markdown}\nwritten: bench/results/soak.json, bench/results/soak.md\n`);
process.exit(rows.every((row) => row.verdict === 'flat') ? 0 : 1);
