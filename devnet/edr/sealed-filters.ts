import { numberToHex } from 'viem';
import { InvalidParamsError, ServerError } from '../../src/errors.ts';

/**
 * eth_newFilter / eth_newBlockFilter / eth_getFilterChanges / eth_getFilterLogs /
 * eth_uninstallFilter as of the sealed head, kept by the devnet rather than by EDR.
 *
 * EDR's own filters see the trial blocks the devnet mines between flashblocks
 * (block-building.ts) and report their logs once; hidden there (sealed-view.ts) they would be
 * lost, because the block mined whole at the seal is not reported again after the revert. So a
 * filter here remembers the next block it has not reported, and each poll reads the sealed blocks
 * from there to the head: the same answers a node gives for its canonical chain.
 */
type Rpc = <T>(method: string, params: readonly unknown[]) => Promise<T>;
type Filter =
  { readonly kind: 'logs'; readonly criteria: Record<string, unknown>; next: bigint } | { readonly kind: 'blocks'; next: bigint };

const methods = new Set(['eth_newFilter', 'eth_newBlockFilter', 'eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter']);

export interface SealedFilters {
  handles(method: string): boolean;
  answer(rpc: Rpc, head: bigint, method: string, params: readonly unknown[]): Promise<unknown>;
}

export function createSealedFilters(): SealedFilters {
  const filters = new Map<string, Filter>();
  let lastId = 0n;

  const idParam = (method: string, params: readonly unknown[]): string => {
    const id = params[0];
    if (typeof id !== 'string' || !/^0x[0-9a-fA-F]+$/.test(id))
      throw new InvalidParamsError(`${method}: params[0]: expected a filter id, got ${JSON.stringify(id)}`);
    return numberToHex(BigInt(id));
  };
  const found = (method: string, params: readonly unknown[]): Filter => {
    const filter = filters.get(idParam(method, params));
    if (!filter) throw new ServerError('filter not found');
    return filter;
  };
  /** A filter's fromBlock / toBlock as a number (a tag or none: `fallback`). */
  const blockOf = (tag: unknown, fallback: bigint): bigint =>
    typeof tag === 'string' && /^0x[0-9a-fA-F]+$/.test(tag) ? BigInt(tag) : tag === 'earliest' ? 0n : fallback;
  const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
  const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
  const logsBetween = (rpc: Rpc, criteria: Record<string, unknown>, from: bigint, to: bigint): Promise<unknown[]> =>
    from > to
      ? Promise.resolve([])
      : rpc<unknown[]>('eth_getLogs', [{ ...criteria, fromBlock: numberToHex(from), toBlock: numberToHex(to) }]);

  return {
    handles: (method) => methods.has(method),
    async answer(rpc, head, method, params) {
      switch (method) {
        case 'eth_newFilter': {
          const criteria = params[0];
          if (typeof criteria !== 'object' || criteria === null || Array.isArray(criteria))
            throw new InvalidParamsError(`eth_newFilter: params[0]: expected a log filter object, got ${JSON.stringify(criteria)}`);
          const id = numberToHex(++lastId);
          filters.set(id, { kind: 'logs', criteria: criteria as Record<string, unknown>, next: head + 1n });
          return id;
        }
        case 'eth_newBlockFilter': {
          const id = numberToHex(++lastId);
          filters.set(id, { kind: 'blocks', next: head + 1n });
          return id;
        }
        case 'eth_uninstallFilter':
          return filters.delete(idParam(method, params));
        case 'eth_getFilterLogs': {
          const filter = found(method, params);
          if (filter.kind !== 'logs') throw new InvalidParamsError('eth_getFilterLogs: params[0]: not a log filter');
          const { fromBlock, toBlock, ...criteria } = filter.criteria;
          return logsBetween(rpc, criteria, blockOf(fromBlock, head), min(blockOf(toBlock, head), head));
        }
        default: {
          const filter = found(method, params);
          const from = filter.next;
          filter.next = head + 1n;
          if (filter.kind === 'blocks') {
            const hashes: unknown[] = [];
            for (let n = from; n <= head; n++) {
              const block = await rpc<{ hash: string } | null>('eth_getBlockByNumber', [numberToHex(n), false]);
              if (block) hashes.push(block.hash);
            }
            return hashes;
          }
          const { fromBlock, toBlock, ...criteria } = filter.criteria;
          const start = max(blockOf(fromBlock, from), from);
          const end = min(blockOf(toBlock, head), head);
          return logsBetween(rpc, criteria, start, end);
        }
      }
    },
  };
}
