/**
 * The Denim rule of `node-status`. Since Denim, Base makes one complete canonical block every
 * 200 ms and streams no flashblocks (docs.base.org, Denim overview). So "does the node serve
 * pre-confirmations" becomes "does its head advance about every 200 ms". Base's docs call the
 * blocks' `timestampMs` an optional field: the chain's own interval is reported from it when it
 * is there, and its absence is noted, never failed.
 *
 * The head is read for a window; the wall-clock mean interval between the first and last reads is
 * judged against the target. A polled measure on a busy host is coarse, so up to `slack` × the
 * target passes (a stalled or a 1 s node fails). The chain's own interval, from `timestampMs`, is
 * reported beside it.
 */
export const DENIM_BLOCK_MS = 200;
export const CADENCE_SLACK = 3;

export interface Head {
  readonly number: number;
  /** The block's `timestampMs` (hex in RPC); null when the node leaves it out. */
  readonly timestampMs: number | null;
}

export interface CadenceSample {
  readonly first: Head;
  readonly last: Head;
  /** Wall-clock time between the first and the last read. */
  readonly elapsedMs: number;
  /** The longest wall-clock time the head stayed still between reads. */
  readonly longestStallMs: number;
  /** Some head read in the window had no `timestampMs`. */
  readonly missingTimestampMs: boolean;
}

export interface Cadence {
  readonly healthy: boolean;
  readonly windowMs: number;
  /** Blocks the head advanced by during the window. */
  readonly blocks: number;
  /** Wall-clock milliseconds per block over the window; null when the head did not move. */
  readonly meanIntervalMs: number | null;
  /** Chain milliseconds per block, from `timestampMs`; null without it. */
  readonly chainIntervalMs: number | null;
  readonly longestStallMs: number;
  readonly timestampMs: boolean;
  readonly targetMs: number;
  readonly line: string;
}

/**
 * Reads the head every `pollMs` for `windowMs`.
 * @example const sample = await sampleHead(() => latestHead(rpcUrl), 2000);
 */
export async function sampleHead(
  readHead: () => Promise<Head>,
  windowMs: number,
  pollMs = 50,
  now: () => number = Date.now,
): Promise<CadenceSample> {
  const startedAt = now();
  const first = await readHead();
  let last = first;
  let lastChangeAt = startedAt;
  let longestStallMs = 0;
  let missingTimestampMs = first.timestampMs === null;
  while (now() - startedAt < windowMs) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const head = await readHead();
    const at = now();
    missingTimestampMs ||= head.timestampMs === null;
    if (head.number !== last.number) {
      longestStallMs = Math.max(longestStallMs, at - lastChangeAt);
      lastChangeAt = at;
    }
    last = head;
  }
  const elapsedMs = now() - startedAt;
  return { first, last, elapsedMs, longestStallMs: Math.max(longestStallMs, now() - lastChangeAt), missingTimestampMs };
}

/** The verdict on a sample. Pure. */
export function judgeCadence(sample: CadenceSample, targetMs = DENIM_BLOCK_MS, slack = CADENCE_SLACK): Cadence {
  const blocks = sample.last.number - sample.first.number;
  const seconds = (sample.elapsedMs / 1000).toFixed(1);
  const meanIntervalMs = blocks > 0 ? Math.round(sample.elapsedMs / blocks) : null;
  const chainIntervalMs =
    blocks > 0 && sample.first.timestampMs !== null && sample.last.timestampMs !== null
      ? Math.round((sample.last.timestampMs - sample.first.timestampMs) / blocks)
      : null;
  const base = {
    windowMs: sample.elapsedMs,
    blocks,
    meanIntervalMs,
    chainIntervalMs,
    longestStallMs: sample.longestStallMs,
    timestampMs: !sample.missingTimestampMs,
    targetMs,
  };
  if (blocks < 0) {
    return {
      ...base,
      healthy: false,
      line: `cadence: FAIL, not advancing: the head went back from ${sample.first.number} to ${sample.last.number} in ${seconds} s`,
    };
  }
  if (meanIntervalMs === null) {
    return {
      ...base,
      healthy: false,
      line: `cadence: FAIL, not advancing: the head stayed at block ${sample.first.number} for ${seconds} s (a Denim node makes a block every ${targetMs} ms)`,
    };
  }
  const chain = chainIntervalMs === null ? '' : `; chain time ${chainIntervalMs} ms per block`;
  if (meanIntervalMs > targetMs * slack) {
    return {
      ...base,
      healthy: false,
      line: `cadence: FAIL, slow: ${blocks} blocks in ${seconds} s, one every ${meanIntervalMs} ms (target ${targetMs} ms${chain})`,
    };
  }
  return {
    ...base,
    healthy: true,
    line: `cadence: ok, ${blocks} blocks in ${seconds} s, one every ${meanIntervalMs} ms (target ${targetMs} ms${chain}), ${
      sample.missingTimestampMs ? "timestampMs absent on some blocks (an optional field in Base's docs)" : 'timestampMs on every block'
    }`,
  };
}
