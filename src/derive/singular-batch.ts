import { RLP } from '@ethereumjs/rlp';
import { bigIntToUnpaddedBytes } from '@ethereumjs/util';
import { bytesToHex, concat, hexToBytes, type Hex } from 'viem';
import { readRlpItem, rlpFields } from './rlp-fields.ts';

/**
 * A singular batch (batch type 0; specs/protocol/derivation.md, "Batch Format"):
 *
 *     0x00 ++ rlp([parent_hash, epoch_number, epoch_hash, timestamp, transaction_list])
 *
 * `transaction_list` holds EIP-2718 transactions as RLP byte strings. Bytes after the RLP list are
 * ignored, as the spec allows ("extra content does not invalidate the decoded batch").
 */
export interface SingularBatch {
  readonly type: 'singular';
  readonly parentHash: Hex;
  readonly epochNumber: bigint;
  readonly epochHash: Hex;
  readonly timestamp: bigint;
  /** Raw EIP-2718 bytes, as the batch carries them. */
  readonly transactions: readonly Uint8Array[];
}

export const singularBatchType = 0;
const fields = rlpFields('DERIVE_BATCH_INVALID');

/**
 * Decodes a singular batch's content (the bytes after its type byte). `where` names the batch in
 * errors (e.g. "channel 0x…, batch 3"), `base` is the content's offset. Throws `DERIVE_BATCH_INVALID`.
 */
export function decodeSingularBatch(content: Uint8Array, where = 'singular batch', base = 1): SingularBatch {
  const { item } = readRlpItem(content, 'DERIVE_BATCH_INVALID', where, base);
  const [parentHash, epochNumber, epochHash, timestamp, transactions] = fields.list(item, where, 5);
  return {
    type: 'singular',
    parentHash: bytesToHex(fields.fixed(parentHash, 32, `${where} parent_hash`)),
    epochNumber: fields.uint(epochNumber, 8, `${where} epoch_number`),
    epochHash: bytesToHex(fields.fixed(epochHash, 32, `${where} epoch_hash`)),
    timestamp: fields.uint(timestamp, 8, `${where} timestamp`),
    transactions: fields.list(transactions, `${where} transaction_list`).map((tx, i) => fields.bytes(tx, `${where} transaction ${i}`)),
  };
}

/** The batch bytes (type byte included) of a singular batch: the inverse of `decodeSingularBatch`. */
export function encodeSingularBatch(batch: Omit<SingularBatch, 'type'>): Uint8Array {
  const body = RLP.encode([
    hexToBytes(batch.parentHash),
    bigIntToUnpaddedBytes(batch.epochNumber),
    hexToBytes(batch.epochHash),
    bigIntToUnpaddedBytes(batch.timestamp),
    [...batch.transactions],
  ]);
  return concat([Uint8Array.of(singularBatchType), body]);
}
