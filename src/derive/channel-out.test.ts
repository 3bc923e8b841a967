import { bytesToHex, hexToBytes, keccak256, numberToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { specBlob } from '../../test/helpers/op-blob.ts';
import { decodeBatcherData, type BatcherInput } from './batcher-data.ts';
import { decodeBlob } from './blob.ts';
import { encodeBlob } from './blob-encoder.ts';
import { encodeBatches, encodeChannelOut, type BatchBlock, type BatchKind, type BatcherTarget } from './channel-out.ts';
import type { CompressionAlgo } from './channel.ts';
import { derivationRules } from './rules.ts';

/**
 * The batcher's encoder against flashlog's decoder (the Go peer reads the same output in
 * test/integration/derive-go-peer.test.ts): blocks signed by viem go through batches, a channel,
 * frames and calldata or blobs, and decode to the same timestamps, L1 origins and transactions.
 */
const chain = { chainId: 1337n, l2GenesisTime: 1_700_000_000n, blockTime: 2n };
const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

async function blocksOf(count: number, txsPerBlock = 3, dataBytes = 60): Promise<BatchBlock[]> {
  let nonce = 0;
  const blocks: BatchBlock[] = [];
  for (let i = 0; i < count; i++) {
    const transactions: Hex[] = [];
    // Block 2 is empty: a batch carries blocks with no user transaction too.
    for (let t = 0; i !== 2 && t < txsPerBlock; t++) {
      const data = numberToHex(nonce, { size: dataBytes });
      const common = { chainId: 1337, nonce: nonce++, gas: 100_000n, to: '0x4200000000000000000000000000000000000016', data } as const;
      transactions.push(
        await (t % 2
          ? account.signTransaction({ ...common, type: 'legacy', gasPrice: 1_000_000_000n })
          : account.signTransaction({ ...common, type: 'eip1559', maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1n })),
      );
    }
    const epoch = 1000n + BigInt(Math.floor(i / 6));
    blocks.push({
      parentHash: keccak256(numberToHex(i)),
      timestamp: chain.l2GenesisTime + 2n * BigInt(i + 1),
      epochNumber: epoch,
      epochHash: keccak256(numberToHex(epoch, { size: 32 })),
      sequenceNumber: BigInt(i % 6),
      transactions: transactions.map((tx) => hexToBytes(tx)),
    });
  }
  return blocks;
}

const shape = (block: { timestamp: bigint; epochNumber: bigint; transactions: readonly Uint8Array[] }) => ({
  timestamp: block.timestamp,
  epochNumber: block.epochNumber,
  transactions: block.transactions.map((tx) => bytesToHex(tx)),
});

describe('the batcher encoder', () => {
  it('encodes blobs the spec way and the decoder reads them back', () => {
    for (const length of [0, 1, 31, 32, 127, 128, 4000, 130_044]) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 131 + length) & 0xff);
      const blob = encodeBlob(data);
      expect(bytesToHex(blob)).toBe(bytesToHex(specBlob(data)));
      expect(bytesToHex(decodeBlob(blob))).toBe(bytesToHex(data));
    }
    expect(() => encodeBlob(new Uint8Array(130_045))).toThrow(/blob data: got 130045 bytes, expected at most 130044/);
  });

  const combos: [BatchKind, CompressionAlgo, BatcherTarget][] = [
    ['singular', 'zlib', 'calldata'],
    ['span', 'zlib', 'calldata'],
    ['singular', 'brotli', 'blob'],
    ['span', 'brotli', 'blob'],
  ];
  it.each(combos)('%s batches, %s, in %s: the decoder gives back every block', async (kind, compression, target) => {
    const blocks = await blocksOf(14);
    const channelId = bytesToHex(new Uint8Array(16).fill(kind === 'span' ? 0x5b : 0x51));
    // Small calldata frames so the channel spans several batcher transactions.
    const out = encodeChannelOut(blocks, { kind, compression, channelId, target, chain, maxFrameBytes: 400 });
    if (target === 'calldata') expect(out.frames.length).toBeGreaterThan(2);
    const inputs: BatcherInput[] = out.data.map((data, i) =>
      target === 'blob'
        ? { kind: 'blob', bytes: encodeBlob(data), label: `blob ${i}` }
        : { kind: 'calldata', bytes: data, label: `tx ${i}` },
    );
    const report = await decodeBatcherData(inputs, derivationRules('jovian'), chain);
    expect(report.inputs.map((input) => input.error)).toEqual(inputs.map(() => undefined));
    expect(report.channels.map((channel) => [channel.id, channel.compression, channel.read?.end.reason])).toEqual([
      [channelId, compression, 'end'],
    ]);
    const batches = report.channels[0]!.read!.batches;
    const decoded = batches.flatMap((entry) => (entry.type === 'singular' ? [entry.batch] : entry.batch!.blocks));
    expect(decoded.map(shape)).toEqual(blocks.map(shape));
    if (kind === 'singular') {
      expect(batches.map((entry) => entry.type === 'singular' && [entry.batch.parentHash, entry.batch.epochHash])).toEqual(
        blocks.map((block) => [block.parentHash, block.epochHash]),
      );
    } else {
      expect(batches).toHaveLength(1);
      const span = batches[0]!.type === 'span' ? batches[0]!.batch! : undefined;
      expect([span?.parentCheck, span?.l1OriginCheck]).toEqual([blocks[0]!.parentHash.slice(0, 42), blocks.at(-1)!.epochHash.slice(0, 42)]);
    }
  });

  it('refuses blocks a span batch cannot carry, naming the block', async () => {
    const blocks = await blocksOf(3, 1);
    const gap = blocks.map((block, i) => (i === 2 ? { ...block, timestamp: block.timestamp + 1n } : block));
    expect(() => encodeBatches(gap, 'span', chain)).toThrow(/span batch block 2: timestamp .*, expected/);
    const jump = blocks.map((block, i) => (i === 1 ? { ...block, epochNumber: block.epochNumber + 2n } : block));
    expect(() => encodeBatches(jump, 'span', chain)).toThrow(/span batch block 1: L1 origin 1002 after 1000/);
    expect(() => encodeBatches([], 'singular', chain)).toThrow(/no blocks to batch/);
  });
});
