import { EMPTY, concatMap, from, takeUntil, timer, type Observable } from 'rxjs';
import type { Hex } from 'viem';
import { z } from 'zod';
import { advance, type LevelHead, type LifecycleState } from '../chain/lifecycle.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, type Registry } from '../obs/metrics.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { SourceEvent } from './port.ts';

/**
 * Safe and finalized heads for either source, polled every `pollMs`: from op-node's
 * `optimism_syncStatus` (`safe_l2`, `finalized_l2`) when a consensus RPC is given, else from the
 * execution node's `safe` and `finalized` block tags. Emits `lifecycle` events as they advance.
 */
const ref = z.looseObject({ hash: z.string(), number: z.union([z.number(), z.string()]) });
const syncStatus = z.looseObject({ safe_l2: ref, finalized_l2: ref });
const tagged = z.looseObject({ hash: z.string(), number: z.string() }).nullable();

export function safeHeads$(options: {
  rpc: Upstream;
  consensus?: Upstream | undefined;
  pollMs: number;
  stop$: Observable<unknown>;
  logger: Logger;
  metrics: Registry;
}): Observable<SourceEvent> {
  if (options.pollMs === 0) return EMPTY;
  const failures = counter(options.metrics, 'flashlog_lifecycle_errors_total', 'safe/finalized polls that failed, by source', ['source']);
  let state: LifecycleState = {};
  let failing = false;

  async function observe(): Promise<LevelHead[]> {
    if (options.consensus) {
      const status = syncStatus.parse(await options.consensus.call('optimism_syncStatus', []));
      return (['safe', 'finalized'] as const).map((level) => {
        const head = level === 'safe' ? status.safe_l2 : status.finalized_l2;
        return { level, blockNumber: BigInt(head.number), blockHash: head.hash.toLowerCase() as Hex };
      });
    }
    const heads: LevelHead[] = [];
    for (const level of ['safe', 'finalized'] as const) {
      const block = tagged.parse(await options.rpc.call('eth_getBlockByNumber', [level, false]));
      if (block) heads.push({ level, blockNumber: BigInt(block.number), blockHash: block.hash.toLowerCase() as Hex });
    }
    return heads;
  }

  return timer(0, options.pollMs).pipe(
    takeUntil(options.stop$),
    concatMap(async (): Promise<SourceEvent[]> => {
      try {
        const result = advance(state, await observe());
        state = result.state;
        if (failing) options.logger.info('safe/finalized heads: answering again');
        failing = false;
        return result.advanced.map((head) => ({
          type: 'lifecycle',
          level: head.level,
          blockNumber: head.blockNumber,
          blockHash: head.blockHash,
        }));
      } catch (error) {
        failures.inc({ source: options.consensus ? 'consensus' : 'node' });
        if (!failing) options.logger.warn({ err: errorMessage(error) }, 'safe/finalized heads: poll failed; retrying');
        failing = true;
        return [];
      }
    }),
    concatMap((events) => from(events)),
  );
}
