import { numberToHex, type Hex } from 'viem';
import { z } from 'zod';
import type { AssembledBlock } from '../chain/assemble.ts';
import { baseTimeMillisPart, timestampMs } from '../op/basetime.ts';
import { address, bloom, hash32, hexBytes, quantity } from '../schemas/hex.ts';
import { rpcReceiptSchema, type RpcReceipt } from '../records/blocks.ts';
import type { RpcLog } from '../records/logs.ts';
import { rawTransaction } from './raw-transaction.ts';
import { unknownTxType } from '../op/tx-types.ts';

/**
 * A node's block (eth_getBlockByHash with full transactions) and its receipts, as the records of
 * an assembled flashblocks block: index 0, complete, `firstNew` 0, the real block hash (as
 * `flashblockHash` and `hash`), the payload id the hash's first 8 bytes, and the header fields
 * only the node knows (`transactionsRoot`, `size`, `excessBlobGas`, `requestsHash`) as it gave them. The millisecond time is
 * the node's `timestampMs` where it gives one, else computed from the BaseTime deposit (tx[1]).
 * Logs get `blockTimestamp` and `blockTimestampMs` where the node left them out.
 */
const ZERO32: Hex = `0x${'0'.repeat(64)}`;

export const nodeBlockSchema = z.looseObject({
  number: quantity,
  hash: hash32,
  parentHash: hash32,
  timestamp: quantity,
  timestampMs: quantity.optional(),
  miner: address,
  mixHash: hash32,
  gasLimit: quantity,
  gasUsed: quantity,
  extraData: hexBytes,
  baseFeePerGas: quantity.optional(),
  receiptsRoot: hash32,
  stateRoot: hash32,
  logsBloom: bloom,
  withdrawalsRoot: hash32.optional(),
  parentBeaconBlockRoot: hash32.optional(),
  blobGasUsed: quantity.optional(),
  transactionsRoot: hash32.optional(),
  size: quantity.optional(),
  excessBlobGas: quantity.optional(),
  requestsHash: hash32.optional(),
  transactions: z.array(
    z.looseObject({
      hash: hash32,
      type: quantity.optional(),
      from: address.optional(),
      to: address.nullable().optional(),
      input: hexBytes.optional(),
    }),
  ),
});
export type NodeBlock = z.output<typeof nodeBlockSchema>;

export const nodeReceiptsSchema = z.array(
  rpcReceiptSchema.extend({
    logs: z.array(
      z.looseObject({
        address,
        topics: z.array(hash32),
        data: hexBytes,
        logIndex: quantity,
        transactionIndex: quantity,
        transactionHash: hash32,
      }),
    ),
  }),
);

/** The block's time in milliseconds: the node's `timestampMs`, else from the BaseTime deposit. */
export function blockTimeMs(block: NodeBlock): bigint {
  if (block.timestampMs !== undefined) return BigInt(block.timestampMs);
  return timestampMs(BigInt(block.timestamp), baseTimeMillisPart(block.transactions[1]));
}

export type RawLookup = (hash: Hex) => Promise<Hex>;

/** The block as a flashblocks-assembled one; raw bytes are serialized, or asked for when that fails. */
export async function toAssembledBlock(block: NodeBlock, rawOf: RawLookup): Promise<AssembledBlock> {
  const transactions: { hash: Hex; raw: Hex; rpc?: Record<string, unknown> }[] = [];
  for (const tx of block.transactions) {
    const hash = tx.hash.toLowerCase() as Hex;
    const raw = rawTransaction(tx) ?? (await rawOf(hash));
    // A type flashlog does not know: the node's own JSON is kept beside its bytes, to be served as the node serves it.
    transactions.push(unknownTxType(raw) === undefined ? { hash, raw } : { hash, raw, rpc: tx });
  }
  return {
    blockNumber: BigInt(block.number),
    index: 0,
    payloadId: block.hash.slice(0, 18).toLowerCase(),
    header: {
      number: block.number,
      parentHash: block.parentHash,
      parentBeaconBlockRoot: block.parentBeaconBlockRoot ?? ZERO32,
      miner: block.miner,
      prevRandao: block.mixHash,
      gasLimit: block.gasLimit,
      timestamp: block.timestamp,
      extraData: block.extraData,
      baseFeePerGas: block.baseFeePerGas ?? '0x0',
      gasUsed: block.gasUsed,
      receiptsRoot: block.receiptsRoot,
      logsBloom: block.logsBloom,
      stateRoot: block.stateRoot,
      flashblockHash: block.hash,
      withdrawalsRoot: block.withdrawalsRoot ?? ZERO32,
      blobGasUsed: block.blobGasUsed ?? null,
      withdrawals: [],
      // The node's own header fields, in the record schema's order (src/records/blocks.ts).
      hash: block.hash,
      timestampMs: numberToHex(blockTimeMs(block)),
      ...(block.transactionsRoot !== undefined ? { transactionsRoot: block.transactionsRoot } : {}),
      ...(block.size !== undefined ? { size: block.size } : {}),
      ...(block.excessBlobGas !== undefined ? { excessBlobGas: block.excessBlobGas } : {}),
      ...(block.requestsHash !== undefined ? { requestsHash: block.requestsHash } : {}),
    },
    transactions,
    firstNew: 0,
    metadataReceipts: null,
  };
}

/** The node's receipts with the block's fields on every log (`removed: false`). */
export function toReceipts(block: NodeBlock, receipts: z.output<typeof nodeReceiptsSchema>): RpcReceipt[] {
  const ms = numberToHex(blockTimeMs(block));
  return receipts.map((receipt) => ({
    ...receipt,
    blockHash: block.hash,
    blockNumber: block.number,
    logs: receipt.logs.map((log): RpcLog => ({
      ...log,
      blockNumber: block.number,
      blockHash: block.hash,
      blockTimestamp: (log as { blockTimestamp?: string }).blockTimestamp ?? block.timestamp,
      blockTimestampMs: (log as { blockTimestampMs?: string }).blockTimestampMs ?? ms,
      removed: false,
    })),
  }));
}
