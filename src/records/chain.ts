import { z } from 'zod';
import { hash32, quantity } from '../schemas/hex.ts';
import { topics, type TopicRecord } from './topics.ts';

/** flashlog.chain: what became of a pre-confirmed block once canonical, and the safe / finalized heads. Key: block number. */
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
]);
export type ChainRecord = z.output<typeof chainRecordSchema>;

/** A flashlog.chain record, keyed by its block number (decimal). */
export function chainRecord(value: ChainRecord): TopicRecord {
  return { topic: topics.chain, key: BigInt(value.blockNumber).toString(), value: JSON.stringify(value) };
}
