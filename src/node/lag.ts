import { z } from 'zod';
import { errorMessage } from '../errors.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import type { Latest } from './latest.ts';

export interface LagOptions {
  readonly consensusRpcUrl?: string | undefined;
  readonly maxLagMinutes: number;
  readonly timeoutMs: number;
  readonly nowSeconds?: number | undefined;
}
export interface Lag {
  readonly unsafeL2: { readonly number: number; readonly timestamp: number } | null;
  readonly minutesBehind: number | null;
}

/** The part of `optimism_syncStatus` we read; the rest of the (large) object is ignored. */
const syncStatusSchema = z
  .object({
    unsafe_l2: z.object({ number: z.number().int().nonnegative(), timestamp: z.number().int().nonnegative() }),
  })
  .loose();

/** Lag: from the consensus client when given, else the latest block's age (to the millisecond with `timestampMs`). */
export async function checkLag(
  options: LagOptions,
  now: number,
  latest: Latest | null,
  fail: (code: 1 | 2, line: string) => void,
  lines: string[],
): Promise<Lag> {
  let unsafeL2: Lag['unsafeL2'] = null;
  let minutesBehind: number | null = null;
  if (options.consensusRpcUrl) {
    try {
      const consensus = createUpstream(options.consensusRpcUrl, { timeoutMs: options.timeoutMs });
      const status = syncStatusSchema.parse(await consensus.call('optimism_syncStatus', []));
      unsafeL2 = { number: status.unsafe_l2.number, timestamp: status.unsafe_l2.timestamp };
      minutesBehind = Math.max(0, (now - unsafeL2.timestamp) / 60);
      if (unsafeL2.number === 0 || unsafeL2.timestamp === 0) {
        fail(1, `not syncing: the consensus client reports no unsafe L2 head yet`);
      } else if (minutesBehind > options.maxLagMinutes) {
        fail(1, `behind: unsafe L2 head ${unsafeL2.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes})`);
      } else {
        lines.push(
          `in sync: unsafe L2 head ${unsafeL2.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes})`,
        );
      }
    } catch (error) {
      fail(2, `consensus RPC ${options.consensusRpcUrl} unreachable: ${errorMessage(error)}`);
    }
  } else if (latest) {
    // Without the consensus RPC, the latest block's age is the best measure there is.
    const ageSeconds =
      latest.timestampMs !== null && options.nowSeconds === undefined ? (Date.now() - latest.timestampMs) / 1000 : now - latest.timestamp;
    minutesBehind = Math.max(0, ageSeconds / 60);
    if (minutesBehind > options.maxLagMinutes)
      fail(1, `behind: latest block ${latest.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes})`);
    else
      lines.push(
        `in sync: latest block ${latest.number} is ${minutesBehind.toFixed(1)} minutes old (limit ${options.maxLagMinutes}; no --consensus-rpc, so judged by the latest block)`,
      );
  }
  return { unsafeL2, minutesBehind };
}
