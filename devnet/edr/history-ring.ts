import type { Hex } from 'viem';
import { matchesFilter, type LogFilter } from '../../src/rpc/params.ts';

/**
 * The devnet's newest sealed blocks, as EDR answered them (the block with its transactions as
 * objects, and its receipts), at most `maxBlocks` of them: what a provider forked at the head
 * asks about the blocks at and below its fork block (the fork block itself, BLOCKHASH's 256
 * recent hashes, a receipt or logs of an old transaction), once the provider that mined them is
 * dropped (rollover.ts). An older block is answered as absent (null), as a pruned node does.
 */
export interface RingBlock {
  readonly number: Hex;
  readonly hash: Hex;
  readonly transactions: readonly { readonly hash: Hex; readonly [field: string]: unknown }[];
  readonly [field: string]: unknown;
}
export interface RingReceipt {
  readonly transactionHash: Hex;
  readonly logs: readonly { readonly address: Hex; readonly topics: readonly Hex[] }[];
  readonly [field: string]: unknown;
}

export interface HistoryRing {
  add(block: RingBlock, receipts: readonly RingReceipt[]): void;
  /** The newest block kept, or undefined. */
  head(): RingBlock | undefined;
  /** The oldest block number kept (undefined when empty). */
  oldest(): bigint | undefined;
  byNumber(number: bigint): RingBlock | undefined;
  byHash(hash: Hex): RingBlock | undefined;
  receiptsOf(number: bigint): readonly RingReceipt[] | undefined;
  /** The block and index of a transaction kept. */
  transaction(hash: Hex): { block: RingBlock; index: number } | undefined;
  logs(from: bigint, to: bigint, filter: LogFilter): unknown[];
  size(): number;
}

export function createHistoryRing(maxBlocks: number): HistoryRing {
  const blocks = new Map<bigint, { block: RingBlock; receipts: readonly RingReceipt[] }>();
  const numberByHash = new Map<Hex, bigint>();
  const numberByTx = new Map<Hex, bigint>();
  let newest: bigint | undefined;

  function evict(number: bigint): void {
    const entry = blocks.get(number);
    if (!entry) return;
    blocks.delete(number);
    numberByHash.delete(entry.block.hash);
    for (const tx of entry.block.transactions) numberByTx.delete(tx.hash);
  }

  return {
    add(block, receipts) {
      const number = BigInt(block.number);
      evict(number);
      blocks.set(number, { block, receipts });
      numberByHash.set(block.hash, number);
      for (const tx of block.transactions) numberByTx.set(tx.hash, number);
      newest = newest === undefined || number > newest ? number : newest;
      // Blocks come in order, so the map's first key is the oldest.
      while (blocks.size > maxBlocks) evict(blocks.keys().next().value!);
    },
    head: () => (newest === undefined ? undefined : blocks.get(newest)?.block),
    oldest: () => blocks.keys().next().value,
    byNumber: (number) => blocks.get(number)?.block,
    byHash(hash) {
      const number = numberByHash.get(hash.toLowerCase() as Hex);
      return number === undefined ? undefined : blocks.get(number)?.block;
    },
    receiptsOf: (number) => blocks.get(number)?.receipts,
    transaction(hash) {
      const number = numberByTx.get(hash.toLowerCase() as Hex);
      const block = number === undefined ? undefined : blocks.get(number)?.block;
      if (!block) return undefined;
      const index = block.transactions.findIndex((tx) => tx.hash === hash.toLowerCase());
      return index < 0 ? undefined : { block, index };
    },
    logs(from, to, filter) {
      const out: unknown[] = [];
      for (let number = from; number <= to; number++) {
        for (const receipt of blocks.get(number)?.receipts ?? []) {
          for (const log of receipt.logs) if (matchesFilter(log, filter)) out.push(log);
        }
      }
      return out;
    },
    size: () => blocks.size,
  };
}
