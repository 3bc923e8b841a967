import { z } from 'zod';
import { hash32, quantity } from '../schemas/hex.ts';
import { topics, type TopicRecord } from './topics.ts';

/**
 * flashlog.chain: what became of a pre-confirmed block once canonical, the safe / finalized heads,
 * and the ranges of blocks ingest could not fill (`gap`). Key: block number.
 */
export const chainRecordSchema = z.discriminatedUnion('type', [
  z.looseObject({
    v: z.literal(1),
    type: z.literal('sealed'),
    blockNumber: quantity,
    blockHash: hash32,
    transactions: z.array(hash32),
  }),
  z.looseObject({
    v: z.literal(1),
    type: z.literal('reorg'),
    blockNumber: quantity,
    blockHash: hash32,
    /** Canonical transaction hashes, in order. */
    transactions: z.array(hash32),
    /** Pre-confirmed transactions that did not make it into the canonical block. */
    removedTransactions: z.array(hash32),
    /**
     * Blocks source (200 ms blocks): the hash of the unsafe block that was replaced. Every log it
     * published is withdrawn (`removed: true` copies follow on flashlog.logs), and the canonical
     * head does not move: the new block at this height follows on flashlog.blocks.
     */
    replacedBlockHash: hash32.optional(),
  }),
  /** The chain's safe / finalized head advanced to this block (both sources, from the node). */
  z.looseObject({ v: z.literal(1), type: z.literal('safe'), blockNumber: quantity, blockHash: hash32 }),
  z.looseObject({ v: z.literal(1), type: z.literal('finalized'), blockNumber: quantity, blockHash: hash32 }),
  /**
   * Blocks fromBlock..toBlock (inclusive) are not on flashlog.blocks and never will be: ingest could
   * not fill them (after a restart or an outage). `blockNumber` is `fromBlock`. Reasons:
   * `beyond_max_backfill` (more were missing than --max-backfill-blocks allows to read),
   * `not_on_node` (the node could not give them).
   */
  z.looseObject({
    v: z.literal(1),
    type: z.literal('gap'),
    blockNumber: quantity,
    fromBlock: quantity,
    toBlock: quantity,
    reason: z.enum(['beyond_max_backfill', 'not_on_node']),
  }),
]);
export type ChainRecord = z.output<typeof chainRecordSchema>;

/** A flashlog.chain record, keyed by its block number (decimal). */
export function chainRecord(value: ChainRecord): TopicRecord {
  return { topic: topics.chain, key: BigInt(value.blockNumber).toString(), value: JSON.stringify(value) };
}
