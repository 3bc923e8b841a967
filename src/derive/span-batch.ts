import { bytesToHex, concat, hexToBytes, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { createReader, encodeBitlist, encodeUvarint } from './reader.ts';
import {
  encodeSpanBatchTxs,
  maxSpanBatchElementCount,
  readSpanBatchTxs,
  spanBatchTransactions,
  type SpanBatchTxs,
} from './span-batch-txs.ts';

/**
 * A span batch (batch type 1; specs/protocol/delta/span-batches.md):
 *
 *     0x01 ++ prefix ++ payload
 *     prefix  = rel_timestamp(uvarint) ++ l1_origin_num(uvarint) ++ parent_check(20) ++ l1_origin_check(20)
 *     payload = block_count(uvarint, ≥ 1) ++ origin_bits(bitlist, block_count) ++ block_tx_counts(uvarint each) ++ txs
 *
 * `RawSpanBatch` is the encoding as it is; `SpanBatch` is what derivation reads from it with the
 * chain's genesis time, block time and chain id: each block's timestamp, L1 origin number and
 * transactions as EIP-2718 bytes. Bytes after the payload are ignored, as after a singular batch.
 */
export interface RawSpanBatch {
  readonly relTimestamp: bigint;
  readonly l1OriginNumber: bigint;
  /** The first 20 bytes of the first block's parent hash. */
  readonly parentCheck: Hex;
  /** The first 20 bytes of the last block's L1 origin hash. */
  readonly l1OriginCheck: Hex;
  readonly blockCount: number;
  /** Bit i: block i changed its L1 origin. */
  readonly originBits: readonly boolean[];
  readonly blockTxCounts: readonly number[];
  readonly txs: SpanBatchTxs;
}

export interface SpanBatchBlock {
  readonly timestamp: bigint;
  readonly epochNumber: bigint;
  /** EIP-2718 bytes, rebuilt. */
  readonly transactions: readonly Uint8Array[];
}

export interface SpanBatch {
  readonly type: 'span';
  readonly parentCheck: Hex;
  readonly l1OriginCheck: Hex;
  readonly blocks: readonly SpanBatchBlock[];
}

/** What turns a raw span batch into blocks: the rollup config's `genesis.l2_time`, `block_time` and `l2_chain_id`. */
export interface SpanBatchChain {
  readonly l2GenesisTime: bigint;
  readonly blockTime: bigint;
  readonly chainId: bigint;
}

export const spanBatchType = 1;

/**
 * Decodes a span batch's content (the bytes after its type byte). `base` is the content's offset in
 * what the caller reports offsets in. Throws `DERIVE_BATCH_INVALID` naming the field and offset.
 *
 * @example decodeRawSpanBatch(batchBytes.subarray(1), 'channel 0x…, batch 0').blockCount
 */
export function decodeRawSpanBatch(content: Uint8Array, where = 'span batch', base = 1): RawSpanBatch {
  const reader = createReader(content, 'DERIVE_BATCH_INVALID', base);
  const relTimestamp = reader.uvarint(`${where} rel_timestamp`);
  const l1OriginNumber = reader.uvarint(`${where} l1_origin_num`);
  const parentCheck = bytesToHex(reader.bytes(20, `${where} parent_check`));
  const l1OriginCheck = bytesToHex(reader.bytes(20, `${where} l1_origin_check`));
  const countAt = reader.offset;
  const blockCount = reader.uvarint(`${where} block_count`);
  const tooBig = (what: string, at: number, got: bigint) =>
    new FlashlogError(
      'DERIVE_BATCH_INVALID',
      `${where} ${what} at offset ${at}: got ${got}, expected at most ${maxSpanBatchElementCount} (MAX_SPAN_BATCH_ELEMENT_COUNT)`,
    );
  if (blockCount > BigInt(maxSpanBatchElementCount)) throw tooBig('block_count', countAt, blockCount);
  if (blockCount === 0n)
    throw new FlashlogError('DERIVE_BATCH_INVALID', `${where} block_count at offset ${countAt}: 0, a span batch must not be empty`);
  const blocks = Number(blockCount);
  const originBitlist = reader.bitlist(blocks, `${where} origin_bits`);
  const originBits = Array.from({ length: blocks }, (_, i) => originBitlist.has(i));
  const blockTxCounts: number[] = [];
  let total = 0n;
  for (let i = 0; i < blocks; i++) {
    const at = reader.offset;
    const count = reader.uvarint(`${where} block_tx_counts[${i}]`);
    if (count > BigInt(maxSpanBatchElementCount)) throw tooBig(`block_tx_counts[${i}]`, at, count);
    blockTxCounts.push(Number(count));
    total += count;
  }
  if (total > BigInt(maxSpanBatchElementCount)) throw tooBig('the total transaction count', reader.offset, total);
  const txs = readSpanBatchTxs(reader, Number(total), where);
  return { relTimestamp, l1OriginNumber, parentCheck, l1OriginCheck, blockCount: blocks, originBits, blockTxCounts, txs };
}

/** A raw span batch's content (no type byte): the inverse of `decodeRawSpanBatch`. */
export function encodeRawSpanBatch(batch: RawSpanBatch): Uint8Array {
  return concat([
    encodeUvarint(batch.relTimestamp),
    encodeUvarint(batch.l1OriginNumber),
    hexToBytes(batch.parentCheck),
    hexToBytes(batch.l1OriginCheck),
    encodeUvarint(BigInt(batch.blockCount)),
    encodeBitlist(batch.originBits),
    ...batch.blockTxCounts.map((count) => encodeUvarint(BigInt(count))),
    encodeSpanBatchTxs(batch.txs),
  ]);
}

/**
 * The blocks of a raw span batch (span-batches.md, "How derivation works with Span Batches"):
 * block i's timestamp is `genesis + rel_timestamp + i · block_time`; the last block's L1 origin
 * is `l1_origin_num` and each earlier one is one less where the next block's origin bit is set.
 * Throws `DERIVE_BATCH_INVALID` when a transaction cannot be rebuilt (op-node then drops this
 * batch and reads on in the channel).
 */
export function deriveSpanBatch(raw: RawSpanBatch, chain: SpanBatchChain, where = 'span batch'): SpanBatch {
  const epochs: bigint[] = new Array<bigint>(raw.blockCount);
  let epoch = raw.l1OriginNumber;
  for (let i = raw.blockCount - 1; i >= 0; i--) {
    epochs[i] = epoch;
    // uint64 arithmetic, as op-node's: a batch claiming more origin changes than its origin number
    // wraps around (and is refused by batch validation, not here).
    if (raw.originBits[i] && i > 0) epoch = (epoch - 1n) & 0xffff_ffff_ffff_ffffn;
  }
  const transactions = spanBatchTransactions(raw.txs, chain.chainId, where);
  let next = 0;
  const blocks = raw.blockTxCounts.map((count, i) => ({
    timestamp: chain.l2GenesisTime + raw.relTimestamp + chain.blockTime * BigInt(i),
    epochNumber: epochs[i]!,
    transactions: transactions.slice(next, (next += count)),
  }));
  return { type: 'span', parentCheck: raw.parentCheck, l1OriginCheck: raw.l1OriginCheck, blocks };
}
