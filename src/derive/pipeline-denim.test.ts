import { concat, decodeFunctionData, keccak256, numberToHex, parseAbi, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parseTransaction } from 'viem/op-stack';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  batcherTxs,
  l1Hash,
  l2Hash,
  memoryL1,
  memoryL1Genesis,
  memoryL1RollupFields,
  signedTransfer,
} from '../../test/helpers/memory-l1.ts';
import { forksAtGenesis, parseRollupConfig } from '../op/rollup-config.ts';
import type { BatchBlock } from './channel-out.ts';
import { derivationConfigOf } from './derivation-config.ts';
import { deriveBlocks, type DerivedBlock, type DeriveSafeHead } from './pipeline.ts';
import type { SafeBlock } from './span-batch-validity.ts';

/**
 * Base's Denim in derivation (base/base's derive and protocol crates: `RollupConfig::
 * l2_block_timestamp_millis`, `StatefulAttributesBuilder`, `BatchValidator`, PRs #4583, #4783), on a
 * synthetic L1 in memory: a Base-ladder chain whose block 4 is Denim's first (genesis at 0, 2 s
 * blocks, Denim at 8 s). The expected times are the schedule worked out by hand: blocks 1-3 at
 * 2, 4, 6 s; block n ≥ 4 at 8,000 + 200·(n − 4) ms.
 */
const batcher = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
const user = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const l2ChainId = 84_539;
const rollup = parseRollupConfig({
  l2_chain_id: l2ChainId,
  block_time: 2,
  ...forksAtGenesis('jovian'),
  azul_time: 0,
  beryl_time: 0,
  cobalt_time: 0,
  denim_time: 8,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
  genesis: memoryL1Genesis(batcher.address, 0, { eip1559Params: '0x000000fa00000006' }),
  ...memoryL1RollupFields,
});
const config = derivationConfigOf(rollup);
/** Block n's full time in ms, by hand from the schedule's definition. */
const millisOf = (n: bigint) => (n < 4n ? 2000n * n : 8000n + 200n * (n - 4n));
const build = async (block: DerivedBlock) => l2Hash(block.number);
type Deposit = {
  type: string;
  sourceHash: Hex;
  from: Hex;
  to: Hex;
  mint?: bigint;
  value?: bigint;
  gas: bigint;
  isSystemTx?: boolean;
  data: Hex;
};
const baseTimeAbi = parseAbi(['function setTimestampMillisPart(uint16)']);

/** The safe head at block `n` (all blocks in epoch 0), as derivation rebuilt it. */
function safeHeadAt(n: bigint): DeriveSafeHead {
  return {
    hash: l2Hash(n),
    number: n,
    timestamp: millisOf(n) / 1000n,
    l1Origin: { hash: l1Hash(0n), number: 0n },
    sequenceNumber: n,
    systemConfig: config.genesisSystemConfig,
    transactions: [],
  };
}

/** The safe blocks before an agreed one, as the host hands them over: blocks 1-5 here. */
const priorBlocks = new Map<bigint, SafeBlock>(
  [1n, 2n, 3n, 4n, 5n].map((n) => [
    n,
    { ref: { hash: l2Hash(n), number: n, timestamp: millisOf(n) / 1000n, l1OriginNumber: 0n }, transactions: [] },
  ]),
);

/** Derives blocks after `from` up to `until` from `l1`, with the prior blocks unless told otherwise, into `events`. */
function derive(l1: ReturnType<typeof memoryL1>, from: bigint, until: bigint, events: string[] = [], prior = true) {
  return deriveBlocks({
    rollup,
    l1,
    l1Head: l1.headers.at(-1)!.hash,
    safeHead: safeHeadAt(from),
    until,
    build,
    ...(prior ? { priorBlocks: (n: bigint) => priorBlocks.get(n) } : {}),
    onEvent: (e) => events.push(e),
  });
}

/** Blocks 1..count on the schedule, each with one user transfer; `legacy` spaces them 2 s apart (a batcher unaware of Denim). */
async function l2Blocks(count: number, legacy = false): Promise<BatchBlock[]> {
  const blocks: BatchBlock[] = [];
  for (let n = 1n; n <= BigInt(count); n++) {
    const timestamp = legacy ? 2n * n : millisOf(n) / 1000n;
    blocks.push({
      parentHash: l2Hash(n - 1n),
      timestamp,
      epochNumber: 0n,
      epochHash: l1Hash(0n),
      sequenceNumber: n,
      transactions: [await signedTransfer(user, l2ChainId, n, batcher.address)],
    });
  }
  return blocks;
}

describe('deriveBlocks across Base Denim', () => {
  let blocks: BatchBlock[];
  beforeAll(async () => {
    blocks = await l2Blocks(12);
  });

  it('derives same-second blocks from singular batches: schedule times, the BaseTime deposit at tx[1], gas ÷ 10 and denominator × 10 from the first Denim block', async () => {
    const l1 = memoryL1(3, new Map([[1n, await batcherTxs(config, batcher, blocks, 'singular', 'zlib')]]), new Map());
    const derived = await derive(l1, 0n, 12n);
    expect(derived.map((block) => block.attributes.timestamp)).toEqual([2n, 4n, 6n, 8n, 8n, 8n, 8n, 8n, 9n, 9n, 9n, 9n]);
    for (const block of derived) {
      const txs = block.attributes.transactions;
      expect(txs.at(-1)).toBe(toHex(blocks[Number(block.number) - 1]!.transactions[0]!));
      if (block.number < 4n) {
        expect(txs).toHaveLength(2);
        expect(block.attributes.gasLimit).toBe(30_000_000n);
        expect(block.attributes.eip1559Params).toBe('0x000000fa00000006');
        continue;
      }
      expect(txs).toHaveLength(3);
      const baseTime = parseTransaction(txs[1]!) as unknown as Deposit;
      expect(baseTime.type).toBe('deposit');
      expect(baseTime.from.toLowerCase()).toBe('0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001');
      expect(baseTime.to.toLowerCase()).toBe('0x4200000000000000000000000000000000000030');
      expect([baseTime.gas, baseTime.mint ?? 0n, baseTime.value ?? 0n, baseTime.isSystemTx ?? false]).toEqual([1_000_000n, 0n, 0n, false]);
      // Domain 3, bound to the L2 block number (base/base `BaseTimeDepositSource`).
      expect(baseTime.sourceHash).toBe(
        keccak256(concat([numberToHex(3, { size: 32 }), keccak256(numberToHex(block.number, { size: 32 }))])),
      );
      const { args } = decodeFunctionData({ abi: baseTimeAbi, data: baseTime.data });
      expect(BigInt(args[0])).toBe(millisOf(block.number) % 1000n);
      expect(block.attributes.gasLimit).toBe(3_000_000n);
      expect(block.attributes.eip1559Params).toBe('0x000009c400000006'); // 2,500 and 6
      expect(block.systemConfig.gasLimit).toBe(3_000_000n);
    }
  });

  it('skips a same-second batch built on an already safe block without dropping its channel; a batch on a stranger parent flushes it', async () => {
    // Derivation restarts at block 6 inside the channel of blocks 1-12: the batches of blocks 4-6
    // share the next block's second (8) but were built on blocks 3-5.
    const l1 = memoryL1(3, new Map([[1n, await batcherTxs(config, batcher, blocks, 'singular', 'zlib')]]), new Map());
    const events: string[] = [];
    const derived = await derive(l1, 6n, 12n, events);
    expect(derived.map((block) => block.number)).toEqual([7n, 8n, 9n, 10n, 11n, 12n]);
    expect(events.filter((e) => /same second 8\), already safe/.test(e))).toHaveLength(0); // skipped quietly: not a drop
    // Without the blocks of that second the batch cannot be told from a stranger's: it waits.
    await expect(derive(l1, 6n, 12n, [], false)).rejects.toThrow(/same-second batch: safe L2 block 5 is not known/);

    const forged = blocks.map((block, i) => (i === 6 ? { ...block, parentHash: keccak256('0x0bad') } : block));
    const forgedL1 = memoryL1(3, new Map([[1n, await batcherTxs(config, batcher, forged, 'singular', 'zlib')]]), new Map());
    await expect(derive(forgedL1, 6n, 12n, events)).rejects.toThrow(/derives L2 blocks up to 6, not 12/);
    expect(events.some((e) => e.includes(`parent hash ${keccak256('0x0bad')} is not the safe head`))).toBe(true);
  });

  it("takes a span batch's blocks before Denim, drops its tail and every span batch for a Denim block; singular batches go on", async () => {
    const legacy = await l2Blocks(8, true);
    const l1 = memoryL1(
      4,
      new Map([
        [1n, await batcherTxs(config, batcher, legacy, 'span', 'zlib')],
        // A span's blocks are 2 s apart by its format: one Denim block is all it can hold.
        [2n, await batcherTxs(config, batcher, blocks.slice(3, 4), 'span', 'zlib', 10)],
        [3n, await batcherTxs(config, batcher, blocks.slice(3, 8), 'singular', 'zlib', 20)],
      ]),
      new Map(),
    );
    const events: string[] = [];
    const derived = await derive(l1, 0n, 8n, events);
    expect(derived.map((block) => [block.number, block.attributes.timestamp, block.inclusion?.number])).toEqual([
      [1n, 2n, 1n],
      [2n, 4n, 1n],
      [3n, 6n, 1n],
      [4n, 8n, 3n],
      [5n, 8n, 3n],
      [6n, 8n, 3n],
      [7n, 8n, 3n],
      [8n, 8n, 3n],
    ]);
    expect(events.some((e) => e.includes("5 blocks past Denim's activation dropped"))).toBe(true);
    expect(events.some((e) => e.includes('a span batch for L2 block 4: from Denim on only singular batches derive'))).toBe(true);

    // Derivation restarted at block 6: the old span of blocks 1-3 read back is past, not dropped.
    const restarted: string[] = [];
    const oldSpan = memoryL1(
      3,
      new Map([
        [1n, await batcherTxs(config, batcher, legacy.slice(0, 3), 'span', 'zlib')],
        [2n, await batcherTxs(config, batcher, blocks, 'singular', 'zlib', 10)],
      ]),
      new Map(),
    );
    const again = await derive(oldSpan, 6n, 8n, restarted);
    expect(again.map((block) => block.number)).toEqual([7n, 8n]);
    expect(restarted.filter((e) => e.includes('span batch'))).toEqual([]);
  });
});
