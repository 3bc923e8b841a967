import { RLP } from '@ethereumjs/rlp';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { brotliCompressSync, constants, deflateSync } from 'node:zlib';
import { bytesToHex, concat, hexToBytes, type Hex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDerivePeer } from '../helpers/derive-peer.ts';
import { decodeBatcherData, type BatcherInput } from '../../src/derive/batcher-data.ts';
import type { ChannelBatch } from '../../src/derive/channel.ts';
import { encodeFrames, parseFrames } from '../../src/derive/frames.ts';
import { createChannelBank } from '../../src/derive/channel-bank.ts';
import { derivationRules, type DecodingFork } from '../../src/derive/rules.ts';
import { encodeSingularBatch } from '../../src/derive/singular-batch.ts';
import { encodeRawSpanBatch } from '../../src/derive/span-batch.ts';
import { spanBatchTxsOf } from '../../src/derive/span-batch-txs.ts';

/**
 * flashlog's decoder against the OP Stack's own derivation code (op-node/rollup/derive from the
 * Go module proxy, in test/go/derive-peer): channels op-node encodes (singular and span batches,
 * zlib and brotli, frames over several batcher transactions, one in a blob) decode here to the
 * batches op-node reads from them; channels flashlog's encoders write decode in op-node to the
 * batches they were written from.
 */
let peer = '';

interface PeerBlock {
  timestamp: number;
  epochNumber: number;
  transactions: Hex[] | null;
}
interface PeerBatch {
  type: 'singular' | 'span';
  parentHash?: Hex;
  epochHash?: Hex;
  parentCheck?: Hex;
  l1OriginCheck?: Hex;
  blocks: PeerBlock[];
  error?: string;
}
interface PeerChain {
  chainId: number;
  genesisTime: number;
  blockTime: number;
}
interface PeerCase {
  name: string;
  compression: string;
  channelId: Hex;
  batcherData: Hex[];
  blobs?: Hex[];
  batches: PeerBatch[];
}

/** A decoded batch in the peer's shape. */
function peerShape(entry: ChannelBatch): PeerBatch {
  if (entry.type === 'singular') {
    const { batch } = entry;
    return {
      type: 'singular',
      parentHash: batch.parentHash,
      epochHash: batch.epochHash,
      blocks: [
        {
          timestamp: Number(batch.timestamp),
          epochNumber: Number(batch.epochNumber),
          transactions: batch.transactions.map((tx) => bytesToHex(tx)),
        },
      ],
    };
  }
  if (!entry.batch) throw new Error(`span batch not rebuilt: ${entry.dropped}`);
  return {
    type: 'span',
    parentCheck: entry.batch.parentCheck,
    l1OriginCheck: entry.batch.l1OriginCheck,
    blocks: entry.batch.blocks.map((block) => ({
      timestamp: Number(block.timestamp),
      epochNumber: Number(block.epochNumber),
      transactions: block.transactions.map((tx) => bytesToHex(tx)),
    })),
  };
}
/** Go marshals an empty transaction list as null. */
const normalized = (batches: PeerBatch[]) =>
  batches.map((batch) => ({ ...batch, blocks: batch.blocks.map((block) => ({ ...block, transactions: block.transactions ?? [] })) }));

function peerRun(mode: 'encode' | 'decode' | 'bank', input?: unknown): unknown {
  const run = spawnSync(peer, [mode], {
    input: input === undefined ? undefined : JSON.stringify(input),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`derive-peer ${mode} exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as unknown;
}

beforeAll(() => {
  // A cold build (modules from the proxy, op-node's derive package and op-geth) takes minutes.
  peer = buildDerivePeer();
}, 20 * 60_000);

describe('the decoder against op-node (test/go/derive-peer)', () => {
  it('decodes the channels op-node encodes to the batches op-node reads from them', async () => {
    const { chain, cases } = peerRun('encode') as { chain: PeerChain; cases: PeerCase[] };
    expect(cases.map((c) => c.name)).toEqual(['singular-zlib', 'span-zlib', 'singular-brotli', 'span-brotli']);
    const spanChain = { chainId: BigInt(chain.chainId), l2GenesisTime: BigInt(chain.genesisTime), blockTime: BigInt(chain.blockTime) };
    for (const c of cases) {
      const inputSets: BatcherInput[][] = [
        c.batcherData.map((data, i) => ({ kind: 'calldata', bytes: hexToBytes(data), label: `${c.name} tx ${i}` })),
      ];
      if (c.blobs) inputSets.push(c.blobs.map((blob, i) => ({ kind: 'blob', bytes: hexToBytes(blob), label: `${c.name} blob ${i}` })));
      for (const inputs of inputSets) {
        const report = await decodeBatcherData(inputs, derivationRules('jovian'), spanChain);
        expect(report.inputs.filter((input) => input.error)).toEqual([]);
        expect(report.channels.map((channel) => [channel.id, channel.compression, channel.read?.end])).toEqual([
          [c.channelId, c.compression === 'zlib' ? 'zlib' : 'brotli', { reason: 'end' }],
        ]);
        expect(report.channels[0]!.read!.batches.map(peerShape), c.name).toEqual(normalized(c.batches));
      }
    }
  });

  it("op-node decodes the channels flashlog's encoders write to the batches they were written from", () => {
    const { chain, cases } = peerRun('encode') as { chain: PeerChain; cases: PeerCase[] };
    // Transactions of every type a span batch carries, signed by go-ethereum, from the peer's singular batches.
    const singular = cases.find((c) => c.name === 'singular-zlib')!.batches;
    const blocks = singular.map((batch) => batch.blocks[0]!);
    const transactions = blocks.map((block) => (block.transactions ?? []).map((tx) => hexToBytes(tx)));
    const singularBatches = blocks.map((block, i) =>
      encodeSingularBatch({
        parentHash: singular[i]!.parentHash!,
        epochNumber: BigInt(block.epochNumber),
        epochHash: singular[i]!.epochHash!,
        timestamp: BigInt(block.timestamp),
        transactions: transactions[i]!,
      }),
    );
    const origins = blocks.map((block, i) => i === 0 || block.epochNumber !== blocks[i - 1]!.epochNumber);
    const span = concat([
      Uint8Array.of(1),
      encodeRawSpanBatch({
        relTimestamp: BigInt(blocks[0]!.timestamp - chain.genesisTime),
        l1OriginNumber: BigInt(blocks.at(-1)!.epochNumber),
        parentCheck: singular[0]!.parentHash!.slice(0, 42) as Hex,
        l1OriginCheck: singular.at(-1)!.epochHash!.slice(0, 42) as Hex,
        blockCount: blocks.length,
        originBits: origins,
        blockTxCounts: transactions.map((list) => list.length),
        txs: spanBatchTxsOf(transactions.flat(), BigInt(chain.chainId)),
      }),
    ]);
    const zlib = (data: Uint8Array) => new Uint8Array(deflateSync(data));
    const brotli = (data: Uint8Array) =>
      concat([Uint8Array.of(1), brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 10 } })]);
    const channels = [
      { id: `0x${'a1'.repeat(16)}` as Hex, batches: singularBatches, compress: zlib },
      { id: `0x${'a2'.repeat(16)}` as Hex, batches: [span], compress: brotli },
      { id: `0x${'a3'.repeat(16)}` as Hex, batches: [...singularBatches.slice(0, 2), span], compress: zlib },
    ];
    const batcherData = channels.map(({ id, batches, compress }) => {
      const compressed = compress(concat(batches.map((batch) => RLP.encode(batch))));
      const half = Math.ceil(compressed.length / 2);
      // Two frames, the second first: op-node's channel takes them in any order.
      return bytesToHex(
        encodeFrames([
          { channelId: id, frameNumber: 1, data: compressed.subarray(half), isLast: true },
          { channelId: id, frameNumber: 0, data: compressed.subarray(0, half), isLast: false },
        ]),
      );
    });
    const decoded = peerRun('decode', { chain, fjord: true, batcherData, blobs: [] }) as {
      channels: { id: Hex; batches: PeerBatch[]; error?: string }[];
      errors: string[] | null;
    };
    expect(decoded.errors ?? []).toEqual([]);
    expect(decoded.channels.map((channel) => [channel.id, channel.error])).toEqual(channels.map((channel) => [channel.id, undefined]));
    const spanExpected: PeerBatch = {
      type: 'span',
      parentCheck: singular[0]!.parentHash!.slice(0, 42) as Hex,
      l1OriginCheck: singular.at(-1)!.epochHash!.slice(0, 42) as Hex,
      blocks: blocks.map((block) => ({ ...block, transactions: block.transactions ?? [] })),
    };
    expect(normalized(decoded.channels[0]!.batches)).toEqual(normalized(singular));
    expect(normalized(decoded.channels[1]!.batches)).toEqual([spanExpected]);
    expect(normalized(decoded.channels[2]!.batches)).toEqual([...normalized(singular.slice(0, 2)), spanExpected]);
  });

  it('hands out the channels op-node hands out, for random frame sequences, before and from Holocene', () => {
    const ids = [`0x${'c1'.repeat(16)}`, `0x${'c2'.repeat(16)}`, `0x${'c3'.repeat(16)}`] as const;
    const arbitraryFrame = fc.record({
      channel: fc.integer({ min: 0, max: 2 }),
      frameNumber: fc.integer({ min: 0, max: 3 }),
      isLast: fc.boolean(),
      size: fc.integer({ min: 0, max: 4 }),
    });
    // Batcher transactions of 1..3 frames in L1 blocks 1..60 blocks apart (the Granite timeout is 50).
    const arbitraryScenario = fc.array(
      fc.record({
        gap: fc.integer({ min: 1, max: 60 }),
        txs: fc.array(fc.array(arbitraryFrame, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 6 },
    );
    const forks: DecodingFork[] = ['bedrock', 'canyon', 'granite', 'holocene'];
    const samples = fc.sample(arbitraryScenario, { numRuns: 150, seed: 29 });
    let serial = 0;
    const scenarios = samples.flatMap((blocks) => {
      let number = 1000;
      const encoded = blocks.map((block) => ({
        number: (number += block.gap),
        txs: block.txs.map((frames) =>
          bytesToHex(
            encodeFrames(
              frames.map((frame) => ({
                channelId: ids[frame.channel]!,
                frameNumber: frame.frameNumber,
                isLast: frame.isLast,
                data: Uint8Array.from({ length: frame.size }, () => serial++ & 0xff),
              })),
            ),
          ),
        ),
      }));
      return forks.map((fork) => ({ fork, blocks: encoded }));
    });
    const fromPeer = peerRun('bank', scenarios) as { data: Hex }[][];
    const ours = scenarios.map(({ fork, blocks }) => {
      const bank = createChannelBank(derivationRules(fork));
      const out: { data: Hex }[] = [];
      for (const block of blocks) {
        for (const tx of block.txs) {
          for (const event of bank.ingest(parseFrames(hexToBytes(tx)), block.number)) {
            if (event.type === 'ready') out.push({ data: bytesToHex(event.channel.data) });
          }
        }
      }
      return out;
    });
    const differing = scenarios.flatMap((scenario, i) =>
      JSON.stringify(ours[i]) === JSON.stringify(fromPeer[i]) ? [] : [{ scenario, ours: ours[i], peer: fromPeer[i] }],
    );
    expect(differing.slice(0, 1)).toEqual([]);
    // The scenarios reach what matters: channels handed out, and not, in every fork.
    expect(ours.filter((channels) => channels.length > 0).length).toBeGreaterThan(100);
  });
});
