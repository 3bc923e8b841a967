import { toHex } from 'viem';
import { z } from 'zod';
import { payloadId, quantity } from '../schemas/hex.ts';
import type { BlockRecordSource } from './blocks.ts';
import { topics, type TopicRecord } from './topics.ts';

/** flashlog.flashblocks: every accepted flashblock, as received. Key: block number (decimal). */
export const flashblockRecordSchema = z.looseObject({
  v: z.literal(1),
  blockNumber: quantity,
  index: z.number().int().nonnegative(),
  payloadId,
  /** Milliseconds since the epoch when the frame reached flashlog. */
  receivedAt: z.number(),
  /** The decoded message exactly as received (snake_case, unknown fields kept). */
  flashblock: z.record(z.string(), z.unknown()),
});
export type FlashblockRecord = z.output<typeof flashblockRecordSchema>;

/**
 * The records one accepted flashblock becomes. First, at once, flashlog.flashblocks (the message as
 * received); then, once executed, flashlog.blocks (the pre-confirmed block so far) and one
 * flashlog.logs record per log of the new transactions. Keys as in ARCHITECTURE.md.
 */
export function flashblockRecord(
  block: Pick<BlockRecordSource, 'blockNumber' | 'index' | 'payloadId'>,
  json: Record<string, unknown>,
  receivedAt: number,
): TopicRecord {
  const value: FlashblockRecord = {
    v: 1,
    blockNumber: toHex(block.blockNumber),
    index: block.index,
    payloadId: block.payloadId,
    receivedAt,
    flashblock: json,
  };
  return { topic: topics.flashblocks, key: block.blockNumber.toString(), value: JSON.stringify(value) };
}
