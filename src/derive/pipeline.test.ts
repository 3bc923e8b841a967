import { keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { configLog, configPayload, depositLog } from '../../test/helpers/l1-logs.ts';
import { forksAtGenesis, parseRollupConfig } from '../op/rollup-config.ts';
import {
  batcherTxs,
  l1Hash,
  l2Hash,
  memoryL1,
  memoryL1Genesis,
  memoryL1RollupFields,
  signedTransfer,
} from '../../test/helpers/memory-l1.ts';
import type { BatchBlock } from './channel-out.ts';
import { derivationConfigOf } from './derivation-config.ts';
import { deriveBlocks, type DerivedBlock, type DeriveSafeHead } from './pipeline.ts';

/**
 * The pipeline's stages on a synthetic L1 held in memory (one module's unit test: the real L1, a
 * real OP node and op-node are in test/integration/derived-chain-prove.test.ts): batches in
 * calldata become blocks, deposits land in an epoch's first block, a batch from another key is
 * ignored and the expired sequencing window fills the chain with empty blocks, and an agreed
 * block whose L1 origin is not on the L1 chain is refused.
 */
const batcher = privateKeyToAccount('0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
const stranger = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const user = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const l2ChainId = 42069;
const rollup = parseRollupConfig({
  l2_chain_id: l2ChainId,
  block_time: 2,
  ...forksAtGenesis('isthmus'),
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
  genesis: memoryL1Genesis(batcher.address),
  ...memoryL1RollupFields,
});
const config = derivationConfigOf(rollup);

/** L2 blocks 1..count every 2 s, each on the newest L1 block not after it, with one user transfer each. */
async function l2Blocks(count: number): Promise<BatchBlock[]> {
  const blocks: BatchBlock[] = [];
  for (let n = 1n; n <= BigInt(count); n++) {
    const timestamp = 2n * n;
    const epochNumber = timestamp / 12n;
    blocks.push({
      parentHash: l2Hash(n - 1n),
      timestamp,
      epochNumber,
      epochHash: l1Hash(epochNumber),
      sequenceNumber: (timestamp - 12n * epochNumber) / 2n,
      transactions: [await signedTransfer(user, l2ChainId, n, batcher.address)],
    });
  }
  return blocks;
}

const safeHead: DeriveSafeHead = {
  hash: l2Hash(0n),
  number: 0n,
  timestamp: 0n,
  l1Origin: { hash: l1Hash(0n), number: 0n },
  sequenceNumber: 0n,
  systemConfig: config.genesisSystemConfig,
  transactions: [],
};
const build = async (block: DerivedBlock) => l2Hash(block.number);
const deposit = { from: user.address, to: user.address, mint: 10n ** 18n, value: 0n, gas: 100_000n, isCreation: false, data: '0x' as Hex };

describe('deriveBlocks', () => {
  let blocks: BatchBlock[];
  beforeAll(async () => {
    blocks = await l2Blocks(8);
  });

  for (const [kind, compression] of [
    ['singular', 'zlib'],
    ['span', 'brotli'],
  ] as const) {
    it(`derives ${kind} batches (${compression}) in calldata: the batch's transactions after the deposits`, async () => {
      const l1 = memoryL1(
        3,
        new Map([[1n, await batcherTxs(config, batcher, blocks, kind, compression)]]),
        new Map([[1n, [{ status: 'success', logs: [depositLog(deposit, 0)] }]]]),
      );
      const derived = await deriveBlocks({ rollup, l1, l1Head: l1.headers.at(-1)!.hash, safeHead, until: 8n, build });
      expect(derived.map((block) => block.number)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n]);
      for (const [i, block] of derived.entries()) {
        const first = block.attributes.transactions[0]!;
        expect(first.startsWith('0x7e')).toBe(true); // the L1-info deposit
        expect(block.attributes.transactions.at(-1)).toBe(toHex(blocks[i]!.transactions[0]!));
        expect(block.l1Origin.number).toBe(blocks[i]!.epochNumber);
        expect(block.sequenceNumber).toBe(blocks[i]!.sequenceNumber);
      }
      // Block 6 (timestamp 12) opens epoch 1: the L1 block's deposit follows the L1-info deposit.
      expect(derived[5]!.attributes.transactions).toHaveLength(3);
      expect(derived[4]!.attributes.transactions).toHaveLength(2);
    });
  }

  it('ignores a batch another key sent and fills the expired sequencing window with empty blocks', async () => {
    const l1 = memoryL1(8, new Map([[1n, await batcherTxs(config, stranger, blocks, 'singular', 'zlib')]]), new Map());
    const events: string[] = [];
    const derived = await deriveBlocks({
      rollup,
      l1,
      l1Head: l1.headers.at(-1)!.hash,
      safeHead,
      until: 8n,
      build,
      onEvent: (e) => events.push(e),
    });
    expect(events.some((e) => e.includes(`sent by ${stranger.address}, not the batcher`))).toBe(true);
    expect(derived).toHaveLength(8);
    for (const block of derived) expect(block.attributes.transactions).toHaveLength(1);
    expect(derived.map((block) => block.l1Origin.number)).toEqual([0n, 0n, 0n, 0n, 0n, 1n, 1n, 1n]);
  });

  it('follows a batcher change: after the SystemConfig names a new batcher, its batches count and the old key is ignored', async () => {
    // L1 block 1 switches the batcher to `stranger`; the old batcher posts blocks 1-4 in L1 block 2
    // (ignored), the new one blocks 1-8 in L1 block 3.
    const switchLog = configLog(0, configPayload.batcher(stranger.address), 0);
    const l1 = memoryL1(
      4,
      new Map([
        [2n, await batcherTxs(config, batcher, blocks.slice(0, 4), 'singular', 'zlib')],
        [3n, await batcherTxs(config, stranger, blocks, 'span', 'zlib', 10)],
      ]),
      new Map([[1n, [{ status: 'success', logs: [switchLog] }]]]),
    );
    const events: string[] = [];
    const derived = await deriveBlocks({
      rollup,
      l1,
      l1Head: l1.headers.at(-1)!.hash,
      safeHead,
      until: 8n,
      build,
      onEvent: (e) => events.push(e),
    });
    expect(
      events.some(
        (e) =>
          e.startsWith('L1 block 2 tx 0') &&
          e.toLowerCase().includes(`sent by ${batcher.address}, not the batcher ${stranger.address}`.toLowerCase()),
      ),
    ).toBe(true);
    expect(derived.map((block) => block.attributes.transactions.at(-1))).toEqual(blocks.map((block) => toHex(block.transactions[0]!)));
    // The SystemConfig the blocks carry names the new batcher from epoch 1 (L1 block 1) on.
    expect(derived[4]!.systemConfig.batcher.toLowerCase()).toBe(batcher.address.toLowerCase());
    expect(derived[5]!.systemConfig.batcher.toLowerCase()).toBe(stranger.address.toLowerCase());
  });

  it('refuses an agreed block whose L1 origin is not on the L1 chain, and a range the L1 does not reach', async () => {
    const l1 = memoryL1(3, new Map([[1n, await batcherTxs(config, batcher, blocks, 'singular', 'zlib')]]), new Map());
    const forked = { ...safeHead, l1Origin: { hash: keccak256('0x01'), number: 0n } };
    await expect(deriveBlocks({ rollup, l1, l1Head: l1.headers.at(-1)!.hash, safeHead: forked, until: 2n, build })).rejects.toThrow(
      /DERIVE_L1_REORG|L1 origin 0 0x[0-9a-f]{64} is not on the L1 chain/,
    );
    const ahead = { ...safeHead, l1Origin: { hash: l1Hash(5n), number: 5n } };
    await expect(deriveBlocks({ rollup, l1, l1Head: l1.headers.at(-1)!.hash, safeHead: ahead, until: 2n, build })).rejects.toThrow(
      /L1 origin 5 0x[0-9a-f]{64} is not on the L1 chain of 0x[0-9a-f]{64} \(the L1 head is block 2\)/,
    );
    await expect(deriveBlocks({ rollup, l1, l1Head: l1.headers.at(-1)!.hash, safeHead, until: 9n, build })).rejects.toThrow(
      /derives L2 blocks up to 8, not 9/,
    );
  });
});
