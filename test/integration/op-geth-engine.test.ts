import { readFileSync } from 'node:fs';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { numberToHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { executeBlock, type ExecutedBlock } from '../../src/evm/op/execute-block.ts';
import { parseBlockFixture } from '../../src/prover/host/fixture.ts';
import { encodeHeader, headerFromRpc, headerHash, headerToRpc, type BlockHeader } from '../../src/op/header.ts';
import { addStateNodes, genesisWitness } from '../helpers/full-state-witness.ts';
import { engineClient, startOpGeth, type EngineClient, type OpGethNode } from '../helpers/op-geth.ts';
import { goPrograms } from '../helpers/strict-clients.ts';
import { JOVIAN_BLOCK, compileOracleContracts, payloadAttributes, rollupConfig, scenario, type ScenarioBlock } from '../oracle/chain.ts';

/**
 * Blocks flashlog's stateless executor builds are accepted by op-geth with the same hash: the
 * oracle chain's scenario (test/oracle/chain.ts) with its own fee recipient, each block built by
 * executeBlock over the whole state (genesis, then the executor's own state after each block) and
 * sent to op-geth with engine_newPayloadV4, which must answer VALID with latestValidHash = our hash;
 * then engine_forkchoiceUpdatedV3 makes it the head. Isthmus blocks 1-4 and Jovian blocks 5-9 are
 * separate cases; the Jovian case needs the executor's Jovian rules.
 */

// The executor's state after a block is the next block's witness: keep the state manager it made.
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

const genesis = JSON.parse(readFileSync(new URL('../fixtures/op-geth/genesis.json', import.meta.url), 'utf8')) as {
  alloc: Parameters<typeof genesisWitness>[0];
};
/** Not the sequencer fee vault of the fixtures: these blocks are flashlog's, not op-geth's. */
const feeRecipient: Hex = '0x00000000000000000000000000000000c0ffee01';

let node: OpGethNode;
let engine: EngineClient;
let blocks: ScenarioBlock[];
let parent: BlockHeader;
let witness: Map<Hex, Uint8Array>;

beforeAll(async () => {
  // A cold build of op-geth takes minutes (a warm Go cache: about 20 s); CI starts it ahead in
  // .ci/run, and build.sh waits for that one instead of building twice.
  const { opGeth } = goPrograms();
  node = await startOpGeth(opGeth, genesis);
  engine = engineClient(node);
  blocks = await scenario(compileOracleContracts().OracleProbe);
  parent = headerFromRpc(await node.rpc('eth_getBlockByNumber', ['0x0', false]), 'op-geth genesis');
  const full = await genesisWitness(genesis.alloc);
  expect(full.stateRoot).toBe(parent.stateRoot);
  witness = full.witness;
}, 1_500_000);

afterAll(async () => {
  await node?.close();
});

/** executeBlock on `parent` with the whole state as witness (through a fixture, as execute-block reads one). */
async function build(block: ScenarioBlock): Promise<ExecutedBlock> {
  const attributes = payloadAttributes(block, [...block.deposits, ...block.userTxs], true, feeRecipient);
  const fixture = parseBlockFixture({
    rollupConfig,
    parentHeader: headerToRpc(parent),
    payload: {
      timestamp: attributes.timestamp,
      prevRandao: attributes.prevRandao,
      feeRecipient: attributes.suggestedFeeRecipient,
      parentBeaconBlockRoot: attributes.parentBeaconBlockRoot,
      gasLimit: attributes.gasLimit,
      eip1559Params: attributes.eip1559Params,
      minBaseFee: block.minBaseFee === undefined ? null : numberToHex(block.minBaseFee),
      transactions: attributes.transactions,
    },
    expected: { blockHash: `0x${'00'.repeat(32)}` },
    preimages: {},
  });
  states.length = 0;
  return executeBlock({ ...fixture.block, witness });
}

/** The engine API's execution payload of a block flashlog built. */
function executionPayload(header: BlockHeader, hash: Hex, transactions: readonly Hex[]) {
  const rpc = headerToRpc(header);
  return {
    parentHash: rpc.parentHash,
    feeRecipient: rpc.miner,
    stateRoot: rpc.stateRoot,
    receiptsRoot: rpc.receiptsRoot,
    logsBloom: rpc.logsBloom,
    prevRandao: rpc.mixHash,
    blockNumber: rpc.number,
    gasLimit: rpc.gasLimit,
    gasUsed: rpc.gasUsed,
    timestamp: rpc.timestamp,
    extraData: rpc.extraData,
    baseFeePerGas: rpc.baseFeePerGas,
    blockHash: hash,
    transactions,
    withdrawals: [],
    blobGasUsed: rpc.blobGasUsed,
    excessBlobGas: rpc.excessBlobGas,
    withdrawalsRoot: rpc.withdrawalsRoot,
  };
}

/** Builds the block, has op-geth validate and adopt it, and carries the executor's state on. */
async function buildAndSend(block: ScenarioBlock): Promise<void> {
  const executed = await build(block);
  const transactions = [...block.deposits, ...block.userTxs];
  const status = await engine.newPayload(
    executionPayload(executed.header, executed.hash, transactions),
    executed.header.parentBeaconBlockRoot!,
  );
  expect({ block: block.number, ...status }).toEqual({
    block: block.number,
    status: 'VALID',
    latestValidHash: executed.hash,
    validationError: null,
  });
  expect(await engine.setHead(executed.hash)).toMatchObject({ status: 'VALID' });
  const head = await node.rpc<{ hash: Hex; number: Hex }>('eth_getBlockByNumber', ['latest', false]);
  expect(head).toMatchObject({ hash: executed.hash, number: numberToHex(block.number) });
  // The state after this block, in full, is the next block's witness (with this block's header for BLOCKHASH).
  await addStateNodes(states.at(-1) as MerkleStateManager, witness);
  const rlp = encodeHeader(executed.header);
  witness.set(executed.hash, Buffer.from(rlp.slice(2), 'hex'));
  parent = executed.header;
}

describe('blocks flashlog builds are accepted by op-geth with the same hash (engine_newPayloadV4)', () => {
  it('op-geth refuses a block whose base fee is one wei off, though its hash matches its header', async () => {
    const executed = await build(blocks[0]!);
    const wrong = { ...executed.header, baseFeePerGas: executed.header.baseFeePerGas! + 1n };
    const status = await engine.newPayload(
      executionPayload(wrong, headerHash(wrong), [...blocks[0]!.deposits, ...blocks[0]!.userTxs]),
      wrong.parentBeaconBlockRoot!,
    );
    expect(status.status).toBe('INVALID');
    expect(status.validationError).toMatch(/baseFee/i);
  });

  it('Isthmus blocks 1-4: deposits with mint, creations, reverts, EIP-7702, operator fee', async () => {
    for (const block of blocks.filter((b) => b.number < JOVIAN_BLOCK)) await buildAndSend(block);
  });

  it('Jovian blocks 5-9: the activation block, minBaseFee, the DA footprint, the Jovian operator fee', async () => {
    expect(parent.number).toBe(JOVIAN_BLOCK - 1n);
    for (const block of blocks.filter((b) => b.number >= JOVIAN_BLOCK)) await buildAndSend(block);
  });
});
