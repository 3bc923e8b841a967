import { EMPTY, Observable, concatMap, distinctUntilChanged, filter, from, map, mergeMap } from 'rxjs';
import { numberToHex } from 'viem';
import type { Logger } from '../obs/logger.ts';
import { errorMessage } from '../errors.ts';
import type { RpcLog } from '../records/logs.ts';
import type { ViewState } from '../view/state.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';

/**
 * The standard `newHeads` and `logs` subscriptions speak of canonical blocks, which the view knows
 * only by number (its head polling). Each canonical block the view's head passes is read from the
 * upstream once (header, and its logs when someone wants them) and handed to the hub, which
 * writes it to every subscriber. Clients such as viem's `watchBlocks` and `watchContractEvent`
 * use these two over WebSocket.
 *
 * The first canonical number seen is the starting point, not news. A head that jumps ahead emits
 * at most `maxCatchUp` blocks (the newest). Only numbers above the highest one emitted are news:
 * a head that goes back (a lagging upstream replica, or a reorg of canonical blocks) emits
 * nothing, and its blocks are not announced again. An upstream failure skips that block, with one
 * log line.
 */
export interface AnnouncedBlock {
  readonly header: Record<string, unknown>;
  readonly logs: readonly RpcLog[];
}

export function canonicalBlocks$(options: {
  readonly states$: Observable<ViewState>;
  readonly upstream: Upstream;
  readonly logger: Logger;
  /** What the subscribers want right now (nothing: the upstream is not asked). */
  readonly wanted: () => { readonly heads: boolean; readonly logs: boolean };
  readonly maxCatchUp?: number;
}): Observable<AnnouncedBlock> {
  const maxCatchUp = BigInt(options.maxCatchUp ?? 16);
  let last: bigint | undefined;
  return options.states$.pipe(
    map((state) => state.canonical),
    filter((canonical) => canonical >= 0n),
    distinctUntilChanged(),
    mergeMap((canonical) => {
      const previous = last;
      if (previous === undefined || canonical > previous) last = canonical;
      if (previous === undefined || canonical <= previous) return EMPTY;
      const wanted = options.wanted();
      if (!wanted.heads && !wanted.logs) return EMPTY;
      const numbers: bigint[] = [];
      for (let n = canonical - maxCatchUp + 1n > previous + 1n ? canonical - maxCatchUp + 1n : previous + 1n; n <= canonical; n++)
        numbers.push(n);
      return from(numbers).pipe(map((number) => ({ number, wanted })));
    }),
    concatMap(({ number, wanted }) =>
      from(read(options.upstream, number, wanted.logs)).pipe(
        filter((block): block is AnnouncedBlock => {
          if (block instanceof Error) {
            options.logger.warn(
              { block: Number(number), err: errorMessage(block) },
              'canonical block for newHeads/logs unreadable upstream; skipped',
            );
            return false;
          }
          return block !== null;
        }),
      ),
    ),
  );
}

async function read(upstream: Upstream, number: bigint, withLogs: boolean): Promise<AnnouncedBlock | Error | null> {
  try {
    const tag = numberToHex(number);
    const [header, logs] = await Promise.all([
      upstream.call('eth_getBlockByNumber', [tag, false]) as Promise<Record<string, unknown> | null>,
      withLogs ? (upstream.call('eth_getLogs', [{ fromBlock: tag, toBlock: tag }]) as Promise<RpcLog[]>) : Promise.resolve([]),
    ]);
    if (!header) return null;
    const { transactions: _transactions, ...head } = header;
    return { header: head, logs };
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
