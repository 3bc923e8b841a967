import { bytesToHex, hexToBytes, keccak256, numberToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeBlob } from '../../src/derive/blob-encoder.ts';
import { encodeChannelOut, type BatchBlock, type BatchKind, type BatcherTarget } from '../../src/derive/channel-out.ts';
import type { CompressionAlgo } from '../../src/derive/channel.ts';
import { buildDerivePeer, peerDecode } from '../helpers/derive-peer.ts';

/**
 * What flashlog's batcher encoder writes (src/derive/channel-out.ts, blob-encoder.ts), read by the
 * OP Stack's own decoder (op-node's derive package and op-service's blob decoding, in
 * test/go/derive-peer): every combination of batch type, compression and calldata or blobs gives
 * back the blocks it was written from.
 */
const chain = { chainId: 1337, genesisTime: 1_700_000_000, blockTime: 2 };
const spanChain = { chainId: 1337n, l2GenesisTime: 1_700_000_000n, blockTime: 2n };
const account = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
let peer = '';

beforeAll(() => {
  peer = buildDerivePeer();
}, 20 * 60_000);

async function blocks(count: number): Promise<BatchBlock[]> {
  const out: BatchBlock[] = [];
  let nonce = 0;
  for (let i = 0; i < count; i++) {
    const txs: Hex[] = [];
    for (let t = 0; t < i % 4; t++) {
      txs.push(
        await account.signTransaction({
          type: 'eip1559',
          chainId: chain.chainId,
          nonce: nonce++,
          gas: 50_000n,
          maxFeePerGas: 3n,
          maxPriorityFeePerGas: 1n,
          to: '0x00000000000000000000000000000000000000aa',
          data: numberToHex(i * 7 + t, { size: 100 }),
        }),
      );
    }
    const epoch = 50n + BigInt(Math.floor(i / 5));
    out.push({
      parentHash: keccak256(numberToHex(i + 1)),
      timestamp: BigInt(chain.genesisTime + 10 + i * chain.blockTime),
      epochNumber: epoch,
      epochHash: keccak256(numberToHex(epoch)),
      sequenceNumber: BigInt(i % 5),
      transactions: txs.map((tx) => hexToBytes(tx)),
    });
  }
  return out;
}

describe("op-node reads flashlog's batcher encoding", () => {
  const combos: [BatchKind, CompressionAlgo, BatcherTarget][] = [
    ['singular', 'zlib', 'calldata'],
    ['span', 'brotli', 'calldata'],
    ['singular', 'brotli', 'blob'],
    ['span', 'zlib', 'blob'],
  ];
  it.each(combos)('%s batches, %s, in %s', async (kind, compression, target) => {
    const written = await blocks(12);
    const channelId = bytesToHex(new Uint8Array(16).fill(0xb7));
    const out = encodeChannelOut(written, { kind, compression, channelId, target, chain: spanChain, maxFrameBytes: 300 });
    const data = out.data.map((bytes) => bytesToHex(target === 'blob' ? encodeBlob(bytes) : bytes));
    const decoded = peerDecode(peer, {
      chain,
      fjord: true,
      batcherData: target === 'calldata' ? data : [],
      blobs: target === 'blob' ? data : [],
    });
    expect(decoded.errors ?? []).toEqual([]);
    expect(decoded.channels.map((channel) => [channel.id, channel.error])).toEqual([[channelId, undefined]]);
    const batches = decoded.channels[0]!.batches;
    expect(batches.map((batch) => [batch.type, batch.error])).toEqual((kind === 'span' ? [0] : written).map(() => [kind, undefined]));
    expect(batches.flatMap((batch) => batch.blocks).map((block) => [block.timestamp, block.epochNumber, block.transactions ?? []])).toEqual(
      written.map((block) => [Number(block.timestamp), Number(block.epochNumber), block.transactions.map((tx) => bytesToHex(tx))]),
    );
  });
});
