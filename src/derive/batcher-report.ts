import { bytesToHex, keccak256 } from 'viem';
import type { BatcherReport } from './batcher-data.ts';
import type { ChannelBatch } from './channel.ts';
import type { Frame } from './frames.ts';

/**
 * The operator's view of a `BatcherReport` as plain JSON: bytes as 0x-hex, integers as JSON
 * numbers while they are exact (else decimal strings), frames without their data, transactions
 * as their hash and EIP-2718 bytes. The one formatter between the decoder's domain shapes and
 * what `flashlog decode-batch` prints.
 */
const quantity = (value: bigint): number | string => (value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString());
const transactionsJson = (transactions: readonly Uint8Array[]) =>
  transactions.map((raw) => ({ hash: keccak256(raw), raw: bytesToHex(raw) }));
/** A bitlist as a string of 0s and 1s, element 0 first. */
const bitsJson = (bits: readonly boolean[]) => bits.map((bit) => (bit ? '1' : '0')).join('');

export const frameJson = (frame: Frame) => ({
  channelId: frame.channelId,
  frameNumber: frame.frameNumber,
  dataBytes: frame.data.length,
  isLast: frame.isLast,
  offset: frame.offset,
});

export function batchJson(entry: ChannelBatch): Record<string, unknown> {
  if (entry.type === 'singular') {
    const { batch } = entry;
    return {
      type: 'singular',
      offset: entry.offset,
      parentHash: batch.parentHash,
      epochNumber: quantity(batch.epochNumber),
      epochHash: batch.epochHash,
      timestamp: quantity(batch.timestamp),
      transactions: transactionsJson(batch.transactions),
    };
  }
  const { raw } = entry;
  return {
    type: 'span',
    offset: entry.offset,
    relTimestamp: quantity(raw.relTimestamp),
    l1OriginNumber: quantity(raw.l1OriginNumber),
    parentCheck: raw.parentCheck,
    l1OriginCheck: raw.l1OriginCheck,
    blockCount: raw.blockCount,
    originBits: bitsJson(raw.originBits),
    blockTxCounts: raw.blockTxCounts,
    transactionCount: raw.txs.datas.length,
    ...(entry.dropped ? { dropped: entry.dropped } : {}),
    ...(entry.batch
      ? {
          blocks: entry.batch.blocks.map((block) => ({
            timestamp: quantity(block.timestamp),
            epochNumber: quantity(block.epochNumber),
            transactions: transactionsJson(block.transactions),
          })),
        }
      : {}),
  };
}

export function batcherReportJson(report: BatcherReport): Record<string, unknown> {
  return {
    inputs: report.inputs.map((input) => ({
      label: input.label,
      kind: input.kind,
      ...(input.transaction ? { transaction: input.transaction } : {}),
      ...(input.frames ? { frames: input.frames.map(frameJson) } : {}),
      ...(input.error ? { error: input.error } : {}),
    })),
    channels: report.channels.map((channel) => ({
      id: channel.id,
      frames: channel.frames,
      compressedBytes: channel.compressedBytes,
      ...(channel.compression ? { compression: channel.compression } : {}),
      ...(channel.decompressedBytes !== undefined ? { decompressedBytes: channel.decompressedBytes, limited: channel.limited } : {}),
      ...(channel.read ? { batches: channel.read.batches.map(batchJson), end: channel.read.end } : {}),
      ...(channel.error ? { error: channel.error } : {}),
    })),
    dropped: report.dropped,
    open: report.open,
  };
}
