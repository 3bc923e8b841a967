import { RLP } from '@ethereumjs/rlp';
import { concat } from 'viem';
import { brotliCompressSync, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FlashlogError } from '../errors.ts';
import { decompressChannel, readChannelBatches, type ChannelBatch } from './channel.ts';
import { derivationRules } from './rules.ts';
import { encodeSingularBatch } from './singular-batch.ts';
import { encodeRawSpanBatch } from './span-batch.ts';
import { spanBatchTxsOf } from './span-batch-txs.ts';

/** Channels compressed by Node's zlib and brotli (the libraries op-node's encodings name), read back. */
const fjord = derivationRules('fjord');
const singular = (timestamp: bigint, transactions: Uint8Array[] = []) =>
  encodeSingularBatch({ parentHash: `0x${'01'.repeat(32)}`, epochNumber: 7n, epochHash: `0x${'02'.repeat(32)}`, timestamp, transactions });
const channelOf = (...batches: Uint8Array[]) => concat(batches.map((batch) => RLP.encode(batch)));
const zlib = (data: Uint8Array) => new Uint8Array(deflateSync(data));
const brotli = (data: Uint8Array) => concat([Uint8Array.of(1), brotliCompressSync(data)]);
const timestamps = (batches: readonly ChannelBatch[]) =>
  batches.map((entry) => (entry.type === 'singular' ? entry.batch.timestamp : 'span'));

describe('channels', () => {
  it('read zlib and (from Fjord) brotli channels to their end', async () => {
    const data = channelOf(singular(10n, [Uint8Array.of(2, 0xc0)]), singular(12n));
    for (const [compress, name] of [
      [zlib, 'zlib'],
      [brotli, 'brotli'],
    ] as const) {
      const decompressed = await decompressChannel(compress(data), fjord);
      expect(decompressed.compression).toBe(name);
      const read = readChannelBatches(decompressed, fjord);
      expect(timestamps(read.batches)).toEqual([10n, 12n]);
      expect(read.end).toEqual({ reason: 'end' });
    }
  });

  it('refuse brotli before Fjord and a first byte that names no compression', async () => {
    const data = channelOf(singular(10n));
    await expect(decompressChannel(brotli(data), derivationRules('ecotone'))).rejects.toThrow('which only Fjord reads');
    await expect(decompressChannel(concat([Uint8Array.of(2), data]), fjord)).rejects.toThrow(
      'channel byte 0: got 0x02, expected a zlib header (low bits 8 or 15) or the brotli version 0x01',
    );
    await expect(decompressChannel(concat([Uint8Array.of(2), data]), fjord)).rejects.toBeInstanceOf(FlashlogError);
    const compressed = zlib(data);
    await expect(decompressChannel(concat([Uint8Array.of(0x78, 0x9d), compressed.subarray(2)]), fjord)).rejects.toThrow(
      'check bits do not match',
    );
    await expect(decompressChannel(concat([Uint8Array.of(0x7f, 0x9d)]), fjord)).rejects.toThrow('compression method 15, expected 8');
    await expect(decompressChannel(concat([Uint8Array.of(0x78, 0xbb), compressed.subarray(2)]), fjord)).rejects.toThrow(
      'a preset dictionary',
    );
  });

  it('read only the batches that end within MAX_RLP_BYTES_PER_CHANNEL', async () => {
    const first = RLP.encode(singular(10n)).length;
    const data = channelOf(singular(10n), singular(12n), singular(14n));
    const rules = { ...fjord, maxRlpBytesPerChannel: first * 2 + 5 };
    const read = readChannelBatches(await decompressChannel(zlib(data), rules), rules);
    expect(timestamps(read.batches)).toEqual([10n, 12n]);
    expect(read.end).toMatchObject({ reason: 'limit', offset: first * 2 });
    const exact = { ...fjord, maxRlpBytesPerChannel: data.length };
    expect(readChannelBatches(await decompressChannel(zlib(data), exact), exact).end).toEqual({ reason: 'end' });
  });

  it('read what a stream cut short or with a bad checksum holds, and say why they stopped', async () => {
    let seed = 1;
    const noise = Uint8Array.from({ length: 5000 }, () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) >> 23);
    const data = channelOf(singular(10n), singular(12n), singular(14n, [noise]));
    const compressed = zlib(data);
    const cut = readChannelBatches(await decompressChannel(compressed.subarray(0, compressed.length - 1000), fjord), fjord);
    expect(timestamps(cut.batches)).toEqual([10n, 12n]);
    expect(cut.end.reason).toBe('invalid');
    const badSum = Uint8Array.from(compressed);
    badSum[badSum.length - 1]! ^= 0xff;
    // The checksum follows every batch: op-node has read them all before it fails.
    const checked = readChannelBatches(await decompressChannel(badSum, fjord), fjord);
    expect(timestamps(checked.batches)).toEqual([10n, 12n, 14n]);
    // A first block of the reserved type 3: nothing decompresses.
    const corrupt = Uint8Array.from(compressed);
    corrupt[2] = 0b111;
    const broken = await decompressChannel(corrupt, fjord);
    expect(broken.error).toContain('invalid block type');
    expect(readChannelBatches(broken, fjord).end).toMatchObject({ reason: 'invalid', error: expect.stringContaining('decompression:') });
  });

  it('stop at a batch that does not decode, naming it and its offset', async () => {
    const ok = RLP.encode(singular(10n)).length;
    const cases: [Uint8Array, string][] = [
      [RLP.encode([Uint8Array.of(0)]), `channel batch 1 at offset ${ok}: got an RLP list, expected a byte string`],
      [RLP.encode(Uint8Array.of(7, 1, 2)), `channel batch 1 at offset ${ok}: unknown batch type 7`],
      [RLP.encode(new Uint8Array()), `channel batch 1 at offset ${ok}: empty, expected a batch type byte`],
      [RLP.encode(concat([Uint8Array.of(0), RLP.encode([Uint8Array.of(1)])])), 'channel batch 1: got a list of 1 items, expected 5'],
    ];
    for (const [bad, message] of cases) {
      const data = concat([RLP.encode(singular(10n)), bad, RLP.encode(singular(14n))]);
      const read = readChannelBatches(await decompressChannel(zlib(data), fjord), fjord);
      expect(timestamps(read.batches)).toEqual([10n]);
      expect(read.end).toEqual({ reason: 'invalid', offset: ok, error: message });
    }
  });

  it('drop a span batch before Delta, or one whose transactions cannot be rebuilt, and read on', async () => {
    const span = concat([
      Uint8Array.of(1),
      encodeRawSpanBatch({
        relTimestamp: 0n,
        l1OriginNumber: 1n,
        parentCheck: `0x${'00'.repeat(20)}`,
        l1OriginCheck: `0x${'00'.repeat(20)}`,
        blockCount: 1,
        originBits: [false],
        blockTxCounts: [1],
        txs: {
          ...spanBatchTxsOf([], 1n),
          contractCreation: [true],
          yParity: [false],
          signatures: [{ r: new Uint8Array(32), s: new Uint8Array(32) }],
          datas: [Uint8Array.of(3, 0xc0)],
          types: [3],
          nonces: [0n],
          gases: [0n],
        },
      }),
    ]);
    const data = channelOf(singular(10n), span, singular(14n));
    const chain = { chainId: 1n, l2GenesisTime: 0n, blockTime: 2n };
    for (const [fork, dropped] of [
      ['canyon', 'a span batch before Delta'],
      ['delta', 'transaction type 3 is not one a span batch carries'],
    ] as const) {
      const rules = derivationRules(fork);
      const read = readChannelBatches(await decompressChannel(zlib(data), rules), rules, chain);
      expect(timestamps(read.batches)).toEqual([10n, 'span', 14n]);
      const entry = read.batches[1];
      expect(entry?.type === 'span' && entry.dropped).toContain(dropped);
      expect(read.end).toEqual({ reason: 'end' });
    }
  });
});
