import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { hexToBytes, keccak256, toHex, type Hex } from 'viem';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { attributesFor } from '../../src/derive/attributes.ts';
import { encodeChannelOut, type BatchBlock } from '../../src/derive/channel-out.ts';
import { derivationConfigOf } from '../../src/derive/derivation-config.ts';
import { deriveBlocks, type DerivedBlock } from '../../src/derive/pipeline.ts';
import { executeBlock, type PayloadAttributes } from '../../src/evm/op/execute-block.ts';
import { encodeHeader } from '../../src/op/header.ts';
import { parseRollupConfig, type RollupConfig } from '../../src/op/rollup-config.ts';
import { orderedTrieNodes } from '../../src/evm/receipts.ts';
import { deriveAndExecute } from '../../src/prover/enclave/derive-range.ts';
import { l1SourceFromPreimages } from '../../src/prover/enclave/l1-preimages.ts';
import { preimageStore } from '../../src/prover/enclave/preimage-store.ts';
import { digestKey, type Preimage } from '../../src/prover/enclave-protocol.ts';
import { outputRootV0 } from '../../src/prover/output-root.ts';
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
import { memoryL1RollupFields } from '../helpers/memory-l1.ts';
import { appendL1Block, batcher, fill, finish, inbox, newCase, postChannel } from '../../bench/derive/l1.ts';

/**
 * Base's Denim from end to end in-process: the engine builds the Denim test chain
 * (test/helpers/denim-chain.ts: Cobalt blocks 1-3, Denim from block 4, five blocks in one second)
 * from the payload attributes derivation gives for each block on a synthetic L1 (the schedule's
 * seconds, the BaseTime deposit at tx[1], the first Denim block's gas ÷ 10 and denominator × 10);
 * its blocks go to the L1 as singular batches; derivation from that L1 gives the same attributes,
 * and the engine re-executes each from the witness building it read, to the same hash; the
 * enclave's `derive` check proves a range across Denim's activation from the preimages alone. The
 * L1 is the derive bench's (bench/derive/l1.ts: header RLPs over real tries). The engine
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

/** L1 block 0 two seconds before the L2 genesis; every L2 block here is in its epoch. */
const l1Genesis = GENESIS_TIME - 2n;
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

let rollup: RollupConfig;
let blocks: DenimChainBlock[];
let genesisHash: Hex;
let l1Preimages: Preimage[];
let l1Head: Hex;
beforeAll(async () => {
  const l1 = newCase('calldata');
  const epochHash = await appendL1Block(l1, 0, l1Genesis, []);
  rollup = parseRollupConfig({
    ...rollupConfig,
    genesis: {
      l1: { hash: epochHash, number: 0 },
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
    batch_inbox_address: inbox,
  });
  const derivation = derivationConfigOf(rollup);
  // L1 block 0 as bench/derive/l1.ts writes it: the epoch of every L2 block.
  const epoch = {
    hash: epochHash,
    number: 0n,
    timestamp: l1Genesis,
    baseFeePerGas: 1_000_000_000n,
    mixHash: fill('randao', 0),
    parentBeaconBlockRoot: fill('beacon', 0),
    blobBaseFee: 1n,
  };
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
        { header: epoch, receipts: [] },
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
  // Its blocks as singular batches (brotli) in L1 block 1.
  const batches: BatchBlock[] = blocks.map((block) => ({
    parentHash: block.number === 1n ? genesisHash : blocks[Number(block.number) - 2]!.hash,
    timestamp: block.header.timestamp,
    epochNumber: 0n,
    epochHash,
    sequenceNumber: block.number,
    transactions: block.attributes.transactions.filter((tx) => !tx.startsWith('0x7e')).map((tx) => hexToBytes(tx)),
  }));
  const out = encodeChannelOut(batches, {
    kind: 'singular',
    compression: 'brotli',
    channelId: toHex(1, { size: 16 }),
    target: 'calldata',
    chain: derivation.spanBatchChain,
  });
  await appendL1Block(l1, 1, l1Genesis + 12n, await postChannel('calldata', out.data, 0, l1, undefined));
  l1Head = await appendL1Block(l1, 2, l1Genesis + 24n, []);
  l1Preimages = finish(l1).preimages;
}, 180_000);

const keccakPreimage = (value: Hex | Uint8Array): Preimage => {
  const bytes = typeof value === 'string' ? hexToBytes(value) : value;
  return { key: digestKey('keccak256', keccak256(bytes)), value: bytes };
};

describe('Denim derivation, executed', () => {
  it('derives the chain the engine built from its singular batches, and every derived block re-executes to its hash', async () => {
    expect(blocks.map((block) => block.fork)).toEqual(['cobalt', 'cobalt', 'cobalt', ...Array(7).fill('denim')]);
    expect(blocks.map((block) => block.header.timestamp - GENESIS_TIME)).toEqual([2n, 4n, 6n, 8n, 8n, 8n, 8n, 8n, 9n, 9n]);
    expect(blocks.find((block) => block.number === DENIM_BLOCK)!.header.gasLimit).toBe(GAS_LIMIT / 10n);

    const rebuilt: Hex[] = [];
    const derived = await deriveBlocks({
      rollup,
      l1: l1SourceFromPreimages(preimageStore(l1Preimages)),
      l1Head,
      safeHead: {
        hash: genesisHash,
        number: 0n,
        timestamp: GENESIS_TIME,
        l1Origin: { hash: rollup.genesis!.l1.hash as Hex, number: 0n },
        sequenceNumber: 0n,
        systemConfig: derivationConfigOf(rollup).genesisSystemConfig,
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

  it("the enclave's derive check proves blocks 3-10 (across the activation) from the preimages alone, and refuses a forged block", async () => {
    const l2: Preimage[] = [];
    for (const block of blocks) {
      l2.push(keccakPreimage(encodeHeader(block.header)));
      for (const node of await orderedTrieNodes(block.attributes.transactions)) l2.push(keccakPreimage(node));
      for (const value of block.witness.values()) l2.push(keccakPreimage(value));
    }
    const agreed = blocks[1]!;
    const prove = (childOf: (parentHash: Hex, number: number) => { hash: Hex; rlp: Hex }) =>
      deriveAndExecute({
        rollup,
        store: preimageStore([...l1Preimages, ...l2]),
        l1Head,
        agreedHash: agreed.hash,
        claimedBlockNumber: 10,
        childOf,
      });
    const supplied = (parentHash: Hex, number: number) => {
      const block = blocks[number - 1]!;
      if (keccak256(encodeHeader(block.parent)) !== parentHash) throw new Error(`block ${number} does not follow ${parentHash}`);
      return { hash: block.hash, rlp: encodeHeader(block.header) };
    };
    const roots = await prove(supplied);
    expect(roots.map((root) => root.number)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(roots.map((root) => root.outputRoot)).toEqual(
      blocks.slice(2).map((block) => outputRootV0(block.header.stateRoot, block.header.withdrawalsRoot!, block.hash)),
    );
    // Block 7 supplied with another gas limit than Denim's scaled one: refused, naming it.
    const forged = (parentHash: Hex, number: number) =>
      number === 7
        ? { hash: blocks[6]!.hash, rlp: encodeHeader({ ...blocks[6]!.header, gasLimit: GAS_LIMIT }) }
        : supplied(parentHash, number);
    await expect(prove(forged)).rejects.toThrow(/L2 block 7: gas limit is 30000000 in the supplied header, 3000000 derived from L1/);
  });
});
