import { z } from 'zod';
import { address, bloom, hash32, hexBytes, payloadId, quantity } from './hex.ts';
import { withdrawalSchema } from './flashblock.ts';

/**
 * The values flashlog writes to its topics: versioned JSON (`"v": 1`). Quantities stay 0x-hex as
 * in JSON-RPC. Consumers validate with these schemas; unknown fields are kept so that a newer
 * minor addition does not break an older reader. Every record names (blockNumber, index) so a
 * consumer can de-duplicate.
 */

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

/** A log as eth_getLogs returns it, with blockTimestamp; blockHash is 32 zero bytes while pre-confirmed. */
export const rpcLogSchema = z.looseObject({
  address,
  topics: z.array(hash32),
  data: hexBytes,
  blockNumber: quantity,
  blockHash: hash32,
  blockTimestamp: quantity,
  /** The block's time in milliseconds, where the chain has it (Base since Denim). */
  blockTimestampMs: quantity.optional(),
  transactionHash: hash32,
  transactionIndex: quantity,
  logIndex: quantity,
  removed: z.boolean(),
});
export type RpcLog = z.output<typeof rpcLogSchema>;

/** A receipt as eth_getTransactionReceipt returns it (OP fields optional). */
export const rpcReceiptSchema = z.looseObject({
  transactionHash: hash32,
  transactionIndex: quantity,
  blockHash: hash32,
  blockNumber: quantity,
  from: address,
  to: address.nullable(),
  cumulativeGasUsed: quantity,
  gasUsed: quantity,
  effectiveGasPrice: quantity.optional(),
  contractAddress: address.nullable(),
  logs: z.array(rpcLogSchema),
  logsBloom: bloom,
  status: quantity,
  type: quantity,
  l1Fee: quantity.optional().nullable(),
  l1GasPrice: quantity.optional().nullable(),
  l1GasUsed: quantity.optional().nullable(),
  l1FeeScalar: z.string().optional().nullable(),
  l1BaseFeeScalar: quantity.optional().nullable(),
  l1BlobBaseFee: quantity.optional().nullable(),
  l1BlobBaseFeeScalar: quantity.optional().nullable(),
  depositNonce: quantity.optional().nullable(),
  depositReceiptVersion: quantity.optional().nullable(),
});
export type RpcReceipt = z.output<typeof rpcReceiptSchema>;

/** The state of one account after the block so far; storage holds only changed slots. */
export const accountDiffSchema = z.looseObject({
  balance: quantity.optional(),
  nonce: quantity.optional(),
  code: hexBytes.optional(),
  storage: z.record(hash32, hash32).optional(),
});
export type AccountDiff = z.output<typeof accountDiffSchema>;

export const pendingHeaderSchema = z.looseObject({
  number: quantity,
  parentHash: hash32,
  parentBeaconBlockRoot: hash32,
  miner: address,
  prevRandao: hash32,
  gasLimit: quantity,
  timestamp: quantity,
  extraData: hexBytes,
  baseFeePerGas: quantity,
  gasUsed: quantity,
  receiptsRoot: hash32,
  logsBloom: bloom,
  stateRoot: hash32,
  /** The partial block's hash as the builder computed it; on Base it is not the final hash. */
  flashblockHash: hash32,
  withdrawalsRoot: hash32,
  blobGasUsed: quantity.nullable(),
  withdrawals: z.array(withdrawalSchema),
  /**
   * Blocks source (200 ms blocks): the block's real hash and the node's header fields below, as
   * the node answered them; absent on a flashblocks block (not sealed yet) and in older logs.
   */
  hash: hash32.optional(),
  /** Blocks source: the block's time in milliseconds (the node's `timestampMs`, or from BaseTime). */
  timestampMs: quantity.optional(),
  transactionsRoot: hash32.optional(),
  /** The block's RLP size in bytes. */
  size: quantity.optional(),
  excessBlobGas: quantity.optional(),
  /** EIP-7685 requests hash (Isthmus and later headers). */
  requestsHash: hash32.optional(),
});
export type PendingHeader = z.output<typeof pendingHeaderSchema>;

/**
 * flashlog.blocks: the pre-confirmed block after each flashblock. Key: block number (decimal).
 * `transactions` holds every transaction so far; `firstNew` is where this flashblock's start.
 * `receipts` cover the new transactions only (null when no executor produced them);
 * `stateDiff` is the state of every touched account for the block so far.
 */
export const blockRecordSchema = z.looseObject({
  v: z.literal(1),
  blockNumber: quantity,
  index: z.number().int().nonnegative(),
  payloadId,
  header: pendingHeaderSchema,
  transactions: z.array(z.object({ hash: hash32, raw: hexBytes })),
  firstNew: z.number().int().nonnegative(),
  receipts: z.array(rpcReceiptSchema).nullable(),
  stateDiff: z.record(address, accountDiffSchema).nullable(),
  executor: z.enum(['local', 'metadata', 'node']).nullable(),
});
export type BlockRecord = z.output<typeof blockRecordSchema>;

/** flashlog.logs: one log per record. Key: the emitting address. */
export const logRecordSchema = rpcLogSchema.extend({
  v: z.literal(1),
  /** The flashblock index that produced (or, when removed, withdrew) the log. */
  index: z.number().int().nonnegative(),
});
export type LogRecordValue = z.output<typeof logRecordSchema>;

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
