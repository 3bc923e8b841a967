import { concat } from 'viem';
import type { Transform } from 'node:stream';
import { constants, createBrotliDecompress, createInflateRaw } from 'node:zlib';
import { FlashlogError } from '../errors.ts';
import { readRlpItem } from './rlp-fields.ts';
import { decodeSingularBatch, singularBatchType, type SingularBatch } from './singular-batch.ts';
import {
  decodeRawSpanBatch,
  deriveSpanBatch,
  spanBatchType,
  type RawSpanBatch,
  type SpanBatch,
  type SpanBatchChain,
} from './span-batch.ts';

/**
 * A channel → its batches (specs/protocol/derivation.md, "Channel Format" and "Channel Reader";
 * specs/protocol/fjord/derivation.md, "Brotli Channel Compression").
 *
 *     channel = zlib(rlp(batch) ++ rlp(batch) ++ …)                 (first byte's low nibble 8 or 15)
 *             | 0x01 ++ brotli(rlp(batch) ++ rlp(batch) ++ …)       (from Fjord)
 *
 * Each batch is one RLP byte string holding `batch_type ++ content`. Decompression stops at
 * MAX_RLP_BYTES_PER_CHANNEL bytes: the batches that end within the limit are read, the rest is
 * not ("zip bomb" bound). Reading stops at the first batch that does not decode (op-node moves on
 * to the next channel); a span batch whose transactions cannot be rebuilt is dropped alone and
 * reading goes on, as op-node does.
 */

export type CompressionAlgo = 'zlib' | 'brotli';

export interface ChannelReadRules {
  /** MAX_RLP_BYTES_PER_CHANNEL: 10,000,000 (Bedrock), 100,000,000 (from Fjord). */
  readonly maxRlpBytesPerChannel: number;
  /** Brotli channels (version byte 0x01) from Fjord. */
  readonly fjord: boolean;
  /** Span batches from Delta: before it a span batch is dropped. */
  readonly delta: boolean;
}

export interface DecompressedChannel {
  readonly compression: CompressionAlgo;
  /** At most `maxRlpBytesPerChannel` bytes. */
  readonly data: Uint8Array;
  /** The channel decompresses to more than the limit (the rest was not read). */
  readonly limited: boolean;
  /** Why decompression stopped before the end of the stream (corrupt or cut short), if it did. */
  readonly error?: string;
}

export type ChannelBatch =
  | { readonly type: 'singular'; readonly offset: number; readonly batch: SingularBatch }
  | {
      readonly type: 'span';
      readonly offset: number;
      readonly raw: RawSpanBatch;
      /** The blocks, when the chain was given and every transaction rebuilt. */
      readonly batch?: SpanBatch;
      /** Why the span batch was dropped (its transactions, or before Delta); reading went on. */
      readonly dropped?: string;
    };

export interface ChannelBatches {
  readonly batches: readonly ChannelBatch[];
  /** How reading ended: the end of the data, or why it stopped there. */
  readonly end: { readonly reason: 'end' } | { readonly reason: 'limit' | 'invalid'; readonly offset: number; readonly error: string };
}

/**
 * Decompresses a channel, at most `maxRlpBytesPerChannel` bytes of it. Throws
 * `DERIVE_CHANNEL_INVALID` when the first byte names no compression this fork reads.
 */
export async function decompressChannel(channel: Uint8Array, rules: ChannelReadRules): Promise<DecompressedChannel> {
  if (channel.length === 0) throw new FlashlogError('DERIVE_CHANNEL_INVALID', 'channel is empty');
  const first = channel[0]!;
  const nibble = first & 0x0f;
  if (nibble === 8 || nibble === 15) {
    checkZlibHeader(channel);
    // The deflate stream after the 2-byte header, read raw: a stream cut short gives what it holds
    // (Z_SYNC_FLUSH) and the Adler-32 trailer is not waited for, as op-node reads batches from
    // the stream until it fails. Batches are the same either way: the checksum comes after them all.
    const inflate = createInflateRaw({ finishFlush: constants.Z_SYNC_FLUSH });
    return { compression: 'zlib', ...(await inflateBounded(inflate, channel.subarray(2), rules.maxRlpBytesPerChannel)) };
  }
  if (first === 1) {
    if (!rules.fjord)
      throw new FlashlogError('DERIVE_CHANNEL_INVALID', 'channel is brotli-compressed (version byte 0x01), which only Fjord reads');
    return { compression: 'brotli', ...(await inflateBounded(createBrotliDecompress(), channel.subarray(1), rules.maxRlpBytesPerChannel)) };
  }
  throw new FlashlogError(
    'DERIVE_CHANNEL_INVALID',
    `channel byte 0: got 0x${first.toString(16).padStart(2, '0')}, expected a zlib header (low bits 8 or 15) or the brotli version 0x01`,
  );
}

/** The zlib header (RFC 1950) as Go's zlib reader checks it: deflate, a window up to 32 KiB, FCHECK, no dictionary. */
function checkZlibHeader(channel: Uint8Array): void {
  const fail = (detail: string): never => {
    throw new FlashlogError('DERIVE_CHANNEL_INVALID', `channel zlib header: ${detail}`);
  };
  if (channel.length < 2) fail('cut short');
  const [cmf, flg] = [channel[0]!, channel[1]!];
  if ((cmf & 0x0f) !== 8) fail(`compression method ${cmf & 0x0f}, expected 8 (deflate)`);
  if (cmf >> 4 > 7) fail(`window size 2^${(cmf >> 4) + 8}, expected at most 2^15`);
  if ((cmf * 256 + flg) % 31 !== 0) fail(`check bits do not match (0x${cmf.toString(16)}${flg.toString(16).padStart(2, '0')})`);
  if (flg & 0x20) fail('a preset dictionary, which channels do not use');
}

/** Runs `input` through `stream`, keeping at most `limit` bytes of output and what came before an error. */
function inflateBounded(stream: Transform, input: Uint8Array, limit: number): Promise<Omit<DecompressedChannel, 'compression'>> {
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    let settled = false;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      const data = concat(chunks);
      resolve({ data: data.subarray(0, limit), limited: total > limit, ...(error === undefined ? {} : { error }) });
    };
    stream.on('data', (chunk: Buffer) => {
      chunks.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      total += chunk.length;
      if (total > limit) finish();
    });
    stream.on('end', () => finish());
    stream.on('error', (error: Error) => finish(error.message));
    stream.end(input);
  });
}

/**
 * The batches of a decompressed channel, in order. `chain` rebuilds span batches into blocks;
 * without it a span batch is given raw. `where` names the channel in errors.
 */
export function readChannelBatches(
  channel: DecompressedChannel,
  rules: ChannelReadRules,
  chain?: SpanBatchChain,
  where = 'channel',
): ChannelBatches {
  const { data } = channel;
  const batches: ChannelBatch[] = [];
  let offset = 0;
  while (offset < data.length) {
    const at = `${where} batch ${batches.length}`;
    let item: ReturnType<typeof readRlpItem>;
    try {
      item = readRlpItem(data.subarray(offset), 'DERIVE_BATCH_INVALID', at, offset);
    } catch (error) {
      // A batch that runs past the data: past the limit, or past what a cut-short stream gave.
      const reason = channel.limited ? 'limit' : 'invalid';
      const detail = channel.limited
        ? `${at} at offset ${offset} does not end within the ${data.length}-byte limit (MAX_RLP_BYTES_PER_CHANNEL)`
        : `${(error as Error).message}${channel.error ? ` (decompression: ${channel.error})` : ''}`;
      return { batches, end: { reason, offset, error: detail } };
    }
    try {
      batches.push(decodeBatch(item.item, offset, offset + item.size - itemLength(item.item) + 1, rules, chain, at));
    } catch (error) {
      return { batches, end: { reason: 'invalid', offset, error: (error as Error).message } };
    }
    offset += item.size;
  }
  return { batches, end: channel.error ? { reason: 'invalid', offset, error: `decompression: ${channel.error}` } : { reason: 'end' } };
}

const itemLength = (item: ReturnType<typeof readRlpItem>['item']) => (item instanceof Uint8Array ? item.length : 0);

function decodeBatch(
  item: ReturnType<typeof readRlpItem>['item'],
  offset: number,
  /** Offset of the batch's content (after its RLP header and type byte) in the channel's data. */
  contentOffset: number,
  rules: ChannelReadRules,
  chain: SpanBatchChain | undefined,
  at: string,
): ChannelBatch {
  if (!(item instanceof Uint8Array))
    throw new FlashlogError('DERIVE_BATCH_INVALID', `${at} at offset ${offset}: got an RLP list, expected a byte string`);
  if (item.length === 0) throw new FlashlogError('DERIVE_BATCH_INVALID', `${at} at offset ${offset}: empty, expected a batch type byte`);
  const type = item[0]!;
  const content = item.subarray(1);
  if (type === singularBatchType) return { type: 'singular', offset, batch: decodeSingularBatch(content, at, contentOffset) };
  if (type !== spanBatchType) throw new FlashlogError('DERIVE_BATCH_INVALID', `${at} at offset ${offset}: unknown batch type ${type}`);
  const raw = decodeRawSpanBatch(content, at, contentOffset);
  if (!rules.delta) return { type: 'span', offset, raw, dropped: 'a span batch before Delta' };
  if (!chain) return { type: 'span', offset, raw };
  try {
    return { type: 'span', offset, raw, batch: deriveSpanBatch(raw, chain, at) };
  } catch (error) {
    if (!(error instanceof FlashlogError)) throw error;
    return { type: 'span', offset, raw, dropped: error.message };
  }
}
