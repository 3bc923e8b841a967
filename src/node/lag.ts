import { z } from 'zod';
import { errorMessage } from '../errors.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import type { Latest } from './latest.ts';

/**
 * How far behind a node is, as Base's node docs check it: the consensus client's
 * `optimism_syncStatus`, whose `unsafe_l2.timestamp` against now says how far the node trails the
 * chain, and whose `safe_l2` says how far derivation from L1 trails the unsafe head. A node whose
 * L1 derivation stalled keeps following the sequencer's unsafe blocks over P2P, so its unsafe
 * head looks current while its safe head falls behind: only the second measure catches that.
 * Without a consensus RPC, the latest block's age is the only measure.
 */
export interface LagOptions {
  readonly consensusRpcUrl?: string | undefined;
  readonly maxLagMinutes: number;
  /** The safe head further than this behind the unsafe head fails (flashlog's default 30; Base's docs give no number). */
  readonly maxSafeLagMinutes?: number | undefined;
  readonly timeoutMs: number;
  readonly nowSeconds?: number | undefined;
}

export interface L2Ref {
  readonly number: number;
  readonly timestamp: number;
}

export interface SafeLag {
  readonly healthy: boolean;
  /** `unsafe_l2.number − safe_l2.number`. */
  readonly blocks: number;
  /** `unsafe_l2.timestamp − safe_l2.timestamp`, in seconds (block timestamps are seconds, also on Denim). */
  readonly seconds: number;
  readonly limitMinutes: number;
  readonly line: string;
}

export interface Lag {
  readonly unsafeL2: L2Ref | null;
  readonly safeL2: L2Ref | null;
  readonly minutesBehind: number | null;
  readonly safeLag: SafeLag | null;
}

export const DEFAULT_MAX_SAFE_LAG_MINUTES = 30;

const ref = z.object({ number: z.number().int().nonnegative(), timestamp: z.number().int().nonnegative() }).loose();
/** The part of `optimism_syncStatus` we read; the rest of the (large) object is ignored. */
const syncStatusSchema = z.object({ unsafe_l2: ref, safe_l2: ref.nullish() }).loose();

const minutes = (seconds: number) => (seconds / 60).toFixed(1);

/**
 * The safe head's lag behind the unsafe head, judged against a limit. Pure.
 * @example judgeSafeLag({ number: 120, timestamp: 1024 }, { number: 100, timestamp: 1020 }, 30).healthy // true
 */
export function judgeSafeLag(unsafe: L2Ref, safe: L2Ref, limitMinutes: number): SafeLag {
  const blocks = unsafe.number - safe.number;
  const seconds = Math.max(0, unsafe.timestamp - safe.timestamp);
  const base = { blocks, seconds, limitMinutes };
  if (seconds > limitMinutes * 60) {
    return {
      ...base,
      healthy: false,
      line: `safe head: FAIL, safe L2 head ${safe.number} is ${minutes(seconds)} minutes (${blocks} blocks) behind unsafe head ${unsafe.number} (limit ${limitMinutes}): derivation from L1 is not keeping up; check the L1 RPC and beacon endpoints`,
    };
  }
  return {
    ...base,
    healthy: true,
    line: `safe head: ok, safe L2 head ${safe.number} is ${seconds} s (${blocks} blocks) behind the unsafe head (limit ${limitMinutes} minutes)`,
  };
}

/** Lag: from the consensus client when given, else the latest block's age (to the millisecond with `timestampMs`). */
export async function checkLag(
  options: LagOptions,
  now: number,
  latest: Latest | null,
  fail: (code: 1 | 2, line: string) => void,
  lines: string[],
): Promise<Lag> {
  const limit = options.maxLagMinutes;
  if (options.consensusRpcUrl) {
    let status: z.infer<typeof syncStatusSchema>;
    try {
      const consensus = createUpstream(options.consensusRpcUrl, { timeoutMs: options.timeoutMs });
      status = syncStatusSchema.parse(await consensus.call('optimism_syncStatus', []));
    } catch (error) {
      const why =
        error instanceof z.ZodError
          ? `answered optimism_syncStatus with ${error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`
          : `unreachable: ${errorMessage(error)}`;
      fail(2, `lag: FAIL, consensus RPC ${options.consensusRpcUrl} ${why}`);
      return { unsafeL2: null, safeL2: null, minutesBehind: null, safeLag: null };
    }
    const unsafeL2 = { number: status.unsafe_l2.number, timestamp: status.unsafe_l2.timestamp };
    const safeL2 = status.safe_l2 ? { number: status.safe_l2.number, timestamp: status.safe_l2.timestamp } : null;
    const minutesBehind = Math.max(0, (now - unsafeL2.timestamp) / 60);
    if (unsafeL2.number === 0 || unsafeL2.timestamp === 0) {
      fail(1, `lag: FAIL, not syncing: the consensus client reports no unsafe L2 head yet`);
      return { unsafeL2, safeL2, minutesBehind: null, safeLag: null };
    }
    const detail = `unsafe L2 head ${unsafeL2.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${limit})`;
    if (minutesBehind > limit) fail(1, `lag: FAIL, behind: ${detail}`);
    else lines.push(`lag: ok, ${detail}`);
    let safeLag: SafeLag | null = null;
    if (!safeL2) fail(1, `safe head: FAIL, the consensus client reports no safe L2 head`);
    else {
      safeLag = judgeSafeLag(unsafeL2, safeL2, options.maxSafeLagMinutes ?? DEFAULT_MAX_SAFE_LAG_MINUTES);
      if (safeLag.healthy) lines.push(safeLag.line);
      else fail(1, safeLag.line);
    }
    return { unsafeL2, safeL2, minutesBehind, safeLag };
  }
  if (!latest) return { unsafeL2: null, safeL2: null, minutesBehind: null, safeLag: null };
  // Without the consensus RPC, the latest block's age is the best measure there is.
  const ageSeconds =
    latest.timestampMs !== null && options.nowSeconds === undefined ? (Date.now() - latest.timestampMs) / 1000 : now - latest.timestamp;
  const minutesBehind = Math.max(0, ageSeconds / 60);
  const detail = `latest block ${latest.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${limit}; no --consensus-rpc, so judged by the latest block, and the safe head is not checked)`;
  if (minutesBehind > limit) fail(1, `lag: FAIL, behind: ${detail}`);
  else lines.push(`lag: ok, ${detail}`);
  return { unsafeL2: null, safeL2: null, minutesBehind, safeLag: null };
}
