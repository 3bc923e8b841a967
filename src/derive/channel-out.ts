import { RLP } from '@ethereumjs/rlp';
import { brotliCompressSync, constants, deflateSync } from 'node:zlib';
import { concat, slice, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { maxBlobDataBytes } from './blob.ts';
import type { CompressionAlgo } from './channel.ts';
import { encodeFrames, frameOverheadBytes, maxFrameDataLength, type Frame } from './frames.ts';
import { encodeSingularBatch } from './singular-batch.ts';
import { encodeRawSpanBatch, spanBatchType, type SpanBatchChain } from './span-batch.ts';
import { spanBatchTxsOf } from './span-batch-txs.ts';

/**
 * L2 blocks → what a batcher posts (the batcher's side of specs/protocol/derivation.md "Batch
 * Submission", delta/span-batches.md and fjord/derivation.md), the inverse of what channel.ts,
 * frames.ts and blob.ts decode:
 *
 *     blocks  → batches: one singular batch per block, or one span batch for them all
 *     batches → channel: zlib(rlp(batch) ++ …) or, from Fjord, 0x01 ++ brotli(rlp(batch) ++ …)
 *     channel → frames of at most `maxFrameBytes` (frame header included), numbered from 0, the last `is_last`
 *     frames  → batcher data, one frame each: 0x00 ++ frame (a transaction's calldata, or a blob's data)
 *
 * Pure: the channel id is the caller's (op-batcher draws it at random).
 */

/** One L2 block as a batch carries it. */
export interface BatchBlock {
  readonly parentHash: Hex;
  readonly timestamp: bigint;
  readonly epochNumber: bigint;
  readonly epochHash: Hex;
  /** The L1-info deposit's sequence number: 0 for the first block of its epoch (a span batch's origin bit). */
  readonly sequenceNumber: bigint;
  /** EIP-2718 bytes of the block's transactions, deposits excluded (a batch never carries them). */
  readonly transactions: readonly Uint8Array[];
}

export type BatchKind = 'singular' | 'span';
/** Where batcher data goes: a transaction's calldata, or a blob (one frame per blob). */
export type BatcherTarget = 'calldata' | 'blob';

export interface ChannelOutOptions {
  readonly kind: BatchKind;
  readonly compression: CompressionAlgo;
  /** 16 bytes of hex. */
  readonly channelId: Hex;
  readonly target: BatcherTarget;
  /** Span batches: the chain's genesis time, block time and chain id. */
  readonly chain: SpanBatchChain;
  /**
   * Calldata: the largest frame, header included (op-batcher's `--max-l1-tx-size-bytes` less the
   * version byte; default 120,000). Blobs always fill one blob: 130,043 bytes.
   */
  readonly maxFrameBytes?: number;
}

export interface ChannelOut {
  readonly channelId: Hex;
  readonly compressed: Uint8Array;
  readonly frames: readonly Pick<Frame, 'channelId' | 'frameNumber' | 'data' | 'isLast'>[];
  /** One batcher data per frame: a transaction's calldata, or the data a blob carries (encodeBlob). */
  readonly data: readonly Uint8Array[];
}

export const defaultCalldataFrameBytes = 120_000;
/** A frame that fills a blob: the blob's data less the version byte. */
export const blobFrameBytes = maxBlobDataBytes - 1;
/** MAX_RLP_BYTES_PER_CHANNEL before Fjord: what every fork reads. */
const maxChannelRlpBytes = 10_000_000;

export type EncodeChannelOutErrorType = FlashlogError;

/**
 * The batches of `blocks`, each as its bytes (batch type ++ content). Span batches need regular
 * timestamps (`first + i · block_time`) and L1 origins that advance by at most one per block;
 * throws `DERIVE_BATCH_INVALID` naming the block otherwise.
 */
export function encodeBatches(blocks: readonly BatchBlock[], kind: BatchKind, chain: SpanBatchChain): Uint8Array[] {
  if (blocks.length === 0) throw new FlashlogError('DERIVE_BATCH_INVALID', 'no blocks to batch');
  if (kind === 'singular') return blocks.map((block) => encodeSingularBatch(block));
  const first = blocks[0]!;
  const last = blocks.at(-1)!;
  blocks.forEach((block, i) => {
    const expected = first.timestamp + chain.blockTime * BigInt(i);
    if (block.timestamp !== expected) {
      throw new FlashlogError(
        'DERIVE_BATCH_INVALID',
        `span batch block ${i}: timestamp ${block.timestamp}, expected ${expected} (first + i · block time)`,
      );
    }
    const previous = blocks[i - 1];
    const step = previous ? block.epochNumber - previous.epochNumber : 0n;
    if (step !== (previous && block.sequenceNumber === 0n ? 1n : 0n)) {
      throw new FlashlogError(
        'DERIVE_BATCH_INVALID',
        `span batch block ${i}: L1 origin ${block.epochNumber} after ${previous?.epochNumber}, sequence number ${block.sequenceNumber}: a span batch moves the origin by one at sequence number 0`,
      );
    }
  });
  if (first.timestamp < chain.l2GenesisTime) {
    throw new FlashlogError(
      'DERIVE_BATCH_INVALID',
      `span batch: first timestamp ${first.timestamp} is before genesis ${chain.l2GenesisTime}`,
    );
  }
  const content = encodeRawSpanBatch({
    relTimestamp: first.timestamp - chain.l2GenesisTime,
    l1OriginNumber: last.epochNumber,
    parentCheck: slice(first.parentHash, 0, 20),
    l1OriginCheck: slice(last.epochHash, 0, 20),
    blockCount: blocks.length,
    originBits: blocks.map((block) => block.sequenceNumber === 0n),
    blockTxCounts: blocks.map((block) => block.transactions.length),
    txs: spanBatchTxsOf(
      blocks.flatMap((block) => block.transactions),
      chain.chainId,
    ),
  });
  return [concat([Uint8Array.of(spanBatchType), content])];
}

/** A channel of `batches`: each an RLP byte string, compressed with zlib or (Fjord) brotli. */
export function compressChannel(batches: readonly Uint8Array[], compression: CompressionAlgo): Uint8Array {
  const rlp = concat(batches.map((batch) => RLP.encode(batch)));
  if (rlp.length > maxChannelRlpBytes) {
    throw new FlashlogError(
      'DERIVE_CHANNEL_INVALID',
      `channel: ${rlp.length} bytes of batches, expected at most ${maxChannelRlpBytes} (MAX_RLP_BYTES_PER_CHANNEL)`,
    );
  }
  if (compression === 'zlib') return new Uint8Array(deflateSync(rlp, { level: 9 }));
  const brotli = brotliCompressSync(rlp, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 10, [constants.BROTLI_PARAM_SIZE_HINT]: rlp.length },
  });
  return concat([Uint8Array.of(1), new Uint8Array(brotli)]);
}

/**
 * L2 blocks → one channel → its frames → batcher data, one frame each.
 *
 * @example encodeChannelOut(blocks, { kind: 'span', compression: 'brotli', channelId, target: 'blob', chain }).data.map(encodeBlob)
 */
export function encodeChannelOut(blocks: readonly BatchBlock[], options: ChannelOutOptions): ChannelOut {
  const compressed = compressChannel(encodeBatches(blocks, options.kind, options.chain), options.compression);
  const frameBytes = options.target === 'blob' ? blobFrameBytes : (options.maxFrameBytes ?? defaultCalldataFrameBytes);
  const dataPerFrame = Math.min(frameBytes - frameOverheadBytes, maxFrameDataLength);
  if (!(dataPerFrame > 0))
    throw new FlashlogError(
      'DERIVE_FRAME_INVALID',
      `maxFrameBytes: got ${frameBytes}, expected more than the ${frameOverheadBytes}-byte frame header`,
    );
  const count = Math.max(1, Math.ceil(compressed.length / dataPerFrame));
  if (count > 0xffff)
    throw new FlashlogError('DERIVE_FRAME_INVALID', `channel: ${count} frames, expected at most 65,535 (frame_number is a u16)`);
  const frames = Array.from({ length: count }, (_, frameNumber) => ({
    channelId: options.channelId,
    frameNumber,
    data: compressed.subarray(frameNumber * dataPerFrame, (frameNumber + 1) * dataPerFrame),
    isLast: frameNumber === count - 1,
  }));
  return { channelId: options.channelId, compressed, frames, data: frames.map((frame) => encodeFrames([frame])) };
}
