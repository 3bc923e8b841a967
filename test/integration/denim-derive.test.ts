import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { hexToBytes, keccak256, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { attributesFor } from '../../src/derive/attributes.ts';
import type { BatchBlock } from '../../src/derive/channel-out.ts';
import { derivationConfigOf } from '../../src/derive/derivation-config.ts';
import { deriveBlocks, type DerivedBlock } from '../../src/derive/pipeline.ts';
import { executeBlock, type PayloadAttributes } from '../../src/evm/op/execute-block.ts';
import { encodeHeader } from '../../src/evm/op/header.ts';
import { parseRollupConfig } from '../../src/evm/op/rollup-config.ts';
import {
  buildDenimChain,
  config,
  DENIM_BLOCK,
  EIP1559,
  GAS_LIMIT,
  GENESIS_TIME,
  MIN_BASE_FEE,
  rollupConfig,
  type DenimChainBlock,
} from '../helpers/denim-chain.ts';
import { batcherTxs, l1Hash, memoryL1, memoryL1RollupFields } from '../helpers/memory-l1.ts';

/**
 * Base's Denim from end to end in-process: the engine builds the Denim test chain
 * (test/helpers/denim-chain.ts: Cobalt blocks 1-3, Denim from block 4, five blocks in one second)
 * from the payload attributes derivation gives for each block on a synthetic L1 (the schedule's
 * seconds, the BaseTime deposit at tx[1], the first Denim block's gas ÷ 10 and denominator × 10);
 * its blocks go to the L1 as singular batches; derivation from that L1 gives the same attributes,
 * and the engine re-executes each from the witness building it read, to the same hash. The engine
 * checks on its own what Base's execution layer checks (tx[1]'s form, the first Denim block at
 * millisecond 0, +200 ms a block), so a derivation that got the schedule wrong does not execute.
 */
const states = vi.hoisted(() => [] as unknown[]);
vi.mock('../../src/evm/op/witness-state.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/evm/op/witness-state.ts')>();
  return {
    ...original,
    createWitnessState: (...args: Parameters<typeof original.createWitnessState>) => {
      const state = original.createWitnessState(...args);
      states.push(state);
      return state;
    },
  };
});

const batcher = privateKeyToAccount(keccak256(toHex('flashlog denim derive batcher')));
/** L1 block 0 two seconds before the L2 genesis; every L2 block here is in its epoch. */
const l1Genesis = GENESIS_TIME - 2n;
const rollup = parseRollupConfig({
  ...rollupConfig,
  genesis: {
    l1: { hash: l1Hash(0n), number: 0 },
    l2: { hash: toHex(0, { size: 32 }), number: 0 },
    l2_time: Number(GENESIS_TIME),
    system_config: {
      batcherAddr: batcher.address,
      overhead: toHex(0, { size: 32 }),
      scalar: toHex((1n << 248n) | (1_055_762n << 32n) | 2_269n, { size: 32 }),
      gasLimit: Number(GAS_LIMIT),
      eip1559Params: toHex((BigInt(EIP1559.denominator) << 32n) | BigInt(EIP1559.elasticity), { size: 8 }),
      minBaseFee: Number(MIN_BASE_FEE),
    },
  },
  ...memoryL1RollupFields,
});
const derivation = derivationConfigOf(rollup);
const epoch = memoryL1(1, new Map(), new Map(), l1Genesis).headers[0]!;

const asExecuted = (attributes: DerivedBlock['attributes']): PayloadAttributes => ({
  timestamp: attributes.timestamp,
  prevRandao: attributes.prevRandao,
  feeRecipient: attributes.suggestedFeeRecipient,
  gasLimit: attributes.gasLimit,
  parentBeaconBlockRoot: attributes.parentBeaconBlockRoot,
  eip1559Params: attributes.eip1559Params,
  minBaseFee: attributes.minBaseFee,
  transactions: attributes.transactions,
});

let blocks: DenimChainBlock[];
let genesisHash: Hex;
beforeAll(async () => {
  // The sequencer: each block's attributes as derivation builds them, carrying the SystemConfig on.
  let systemConfig = derivation.genesisSystemConfig;
  const built = await buildDenimChain(() => states.at(-1) as MerkleStateManager, {
    attributesOf: (block, parent, users) => {
      const made = attributesFor(
        {
          timestamp: block.timestamp,
          transactions: users.map((tx) => hexToBytes(tx)),
          parent: { number: parent.number, timestamp: parent.timestamp },
        },
        { header: { ...epoch, blobBaseFee: 1n }, receipts: [] },
        block.number,
        systemConfig,
        { rollup, depositContract: derivation.depositContract, systemConfig: derivation.systemConfigAddress },
      );
      systemConfig = made.systemConfig;
      return asExecuted(made.attributes);
    },
  });
  blocks = built.blocks;
  genesisHash = keccak256(encodeHeader(built.genesis));
}, 180_000);

describe('Denim derivation, executed', () => {
  it('derives the chain the engine built from its singular batches, and every derived block re-executes to its hash', async () => {
    expect(blocks.map((block) => block.fork)).toEqual(['cobalt', 'cobalt', 'cobalt', ...Array(7).fill('denim')]);
    expect(blocks.map((block) => block.header.timestamp - GENESIS_TIME)).toEqual([2n, 4n, 6n, 8n, 8n, 8n, 8n, 8n, 9n, 9n]);
    expect(blocks.find((block) => block.number === DENIM_BLOCK)!.header.gasLimit).toBe(GAS_LIMIT / 10n);

    const batches: BatchBlock[] = blocks.map((block) => ({
      parentHash: block.number === 1n ? genesisHash : blocks[Number(block.number) - 2]!.hash,
      timestamp: block.header.timestamp,
      epochNumber: 0n,
      epochHash: epoch.hash,
      sequenceNumber: block.number,
      transactions: block.attributes.transactions.filter((tx) => !tx.startsWith('0x7e')).map((tx) => hexToBytes(tx)),
    }));
    const l1 = memoryL1(3, new Map([[1n, await batcherTxs(derivation, batcher, batches, 'singular', 'brotli')]]), new Map(), l1Genesis);
    const rebuilt: Hex[] = [];
    const derived = await deriveBlocks({
      rollup,
      l1,
      l1Head: l1.headers.at(-1)!.hash,
      safeHead: {
        hash: genesisHash,
        number: 0n,
        timestamp: GENESIS_TIME,
        l1Origin: { hash: epoch.hash, number: 0n },
        sequenceNumber: 0n,
        systemConfig: derivation.genesisSystemConfig,
        transactions: [],
      },
      until: 10n,
      build: async (block) => {
        const built = blocks[Number(block.number) - 1]!;
        const executed = await executeBlock({
          config,
          parent: built.parent,
          attributes: asExecuted(block.attributes),
          witness: built.witness,
        });
        rebuilt.push(executed.hash);
        return executed.hash;
      },
    });
    expect(derived.map((block) => asExecuted(block.attributes))).toEqual(blocks.map((block) => block.attributes));
    expect(rebuilt).toEqual(blocks.map((block) => block.hash));
  });
});
