/**
 * An OP-ladder devnet chain built by flashlog's stateless engine across Lagoon's activation:
 * Regolith … Jovian and Karst from genesis, Lagoon from block 3. Every block is built with
 * `executeBlock` over the whole state (genesis, then the engine's own state after each block) and
 * keeps the witness of only the trie nodes building it read (test/helpers/denim-chain.ts does the
 * same for Denim). test/integration/lagoon-chain-build.test.ts builds it and writes
 * test/fixtures/lagoon-chain/ (SOURCE.md there); lagoon-chain.test.ts re-executes those.
 *
 * Blocks are 2 s apart. tx[0] is the L1-info deposit (Jovian form, operator fee scalar 7 and
 * constant 500), then EIP-1559 user transactions (transfers, calldata, a contract creation), then,
 * in blocks 4-6, a post-exec transaction (0x7d) with Sequencer-Defined Metering refunds the plan
 * chooses (a sequencer's policy is its own: specs lagoon/sdm.md § Security Considerations).
 */
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { bytesToHex, concat, keccak256, numberToHex, pad, stringToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { l1BlockStorage } from '../../devnet/deposit.ts';
import { executeBlock, type PayloadAttributes } from '../../src/evm/op/execute-block.ts';
import { headerToRpc, type BlockHeader } from '../../src/op/header.ts';
import { encodePostExecTx } from '../../src/op/post-exec.ts';
import type { Receipt } from '../../src/evm/op/receipts.ts';
import { forksAtGenesis, parseRollupConfig } from '../../src/op/rollup-config.ts';
import { emptyTrieRoot } from '../../src/evm/op/witness-state.ts';
import { addStateNodes, genesisWitness } from './full-state-witness.ts';
import { testChainL1Attributes, testChainL1InfoDeposit } from './test-chain-l1.ts';

export const CHAIN_ID = 901_125;
export const GENESIS_TIME = 1_800_000_000n;
export const BLOCK_TIME = 2n;
export const LAGOON_BLOCK = 3n;
export const LAGOON_TIME = GENESIS_TIME + LAGOON_BLOCK * BLOCK_TIME;
const GAS_LIMIT = 30_000_000n;
const FEE_RECIPIENT: Hex = '0x4200000000000000000000000000000000000011';
const MESSAGE_PASSER: Hex = '0x4200000000000000000000000000000000000016';
const L1_BLOCK: Hex = '0x4200000000000000000000000000000000000015';
const eip1559Params = concat([numberToHex(250, { size: 4 }), numberToHex(6, { size: 4 })]);

/** The rollup config in kona's serde form, as the fixtures carry it. */
export const rollupConfig = {
  l2_chain_id: CHAIN_ID,
  block_time: Number(BLOCK_TIME),
  ...forksAtGenesis('jovian'),
  karst_time: 0,
  lagoon_time: Number(LAGOON_TIME),
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
};
export const config = parseRollupConfig(rollupConfig);

export const user = privateKeyToAccount(keccak256(stringToHex('flashlog lagoon chain user')));
const recipients: readonly Hex[] = ['0x000000000000000000000000000000000000a901', '0x000000000000000000000000000000000000a902'];
/** Init code that stores 1 at slot 0 and deploys an empty contract (PUSH1 1 PUSH1 0 SSTORE STOP). */
const creation: Hex = '0x600160005500';

type UserTx = { to: Hex | null; data?: Hex; value?: bigint; gas: bigint };
const transfer = (i: number): UserTx => ({ to: recipients[i % 2]!, value: 1_000n, gas: 21_000n });
const withData = (i: number): UserTx => ({ to: recipients[i % 2]!, data: `0x${'5a'.repeat(32)}${'00'.repeat(32)}`, gas: 40_000n });

/** One block: its number, user transactions and the refunds of its post-exec transaction (none: no 0x7d). */
export interface PlannedBlock {
  readonly number: bigint;
  readonly users: readonly UserTx[];
  /** [transaction index, gas refund]; empty: the block has no post-exec transaction (sdm.md § Validity Rules 1). */
  readonly refunds: readonly (readonly [number, bigint])[];
}

/** The six blocks of test/fixtures/lagoon-chain/. */
export const lagoonPlan: readonly PlannedBlock[] = [
  { number: 1n, users: [transfer(0), { to: null, data: creation, gas: 100_000n }], refunds: [] },
  { number: 2n, users: [transfer(1)], refunds: [] },
  // Lagoon's first block: the rules are on, the sequencer assigns no refund, so no post-exec transaction.
  { number: 3n, users: [transfer(0), withData(1)], refunds: [] },
  { number: 4n, users: [transfer(0), withData(1)], refunds: [[2, 1_234n]] },
  // Two refunds, one of the whole EVM gas of a transfer (canonical gas 0).
  {
    number: 5n,
    users: [transfer(1), withData(0), transfer(0)],
    refunds: [
      [1, 21_000n],
      [3, 5n],
    ],
  },
  { number: 6n, users: [withData(0)], refunds: [[1, 7_000n]] },
];

/**
 * The fixture plan followed by blocks 7…`blocks`, each with three user transactions and a post-exec
 * transaction refunding two of them (gas the transfer and the calldata transaction used), so a
 * stand-in node has a Lagoon chain long enough for the gateway checker (test/helpers/lagoon-stand-in.ts).
 */
export function extendedLagoonPlan(blocks: number): PlannedBlock[] {
  const more = Array.from({ length: Math.max(0, blocks - lagoonPlan.length) }, (_, i): PlannedBlock => {
    const number = BigInt(lagoonPlan.length + 1 + i);
    return {
      number,
      users: [transfer(i), withData(i + 1), transfer(i + 1)],
      refunds: [
        [1, 1_000n + number],
        [2, 3_000n + number],
      ],
    };
  });
  return [...lagoonPlan, ...more];
}

export interface LagoonChainBlock extends PlannedBlock {
  readonly parent: BlockHeader;
  /** Every trie node of the state before the block (the parent's whole state). */
  readonly parentState: ReadonlyMap<Hex, Uint8Array>;
  readonly attributes: PayloadAttributes;
  readonly header: BlockHeader;
  readonly hash: Hex;
  readonly receipts: readonly Receipt[];
  readonly witness: ReadonlyMap<Hex, Uint8Array>;
  readonly fork: string;
  readonly fullStateSize: number;
}

/** A witness that remembers every preimage read from it. */
class RecordingWitness extends Map<Hex, Uint8Array> {
  readonly read = new Map<Hex, Uint8Array>();
  override get(key: Hex): Uint8Array | undefined {
    const value = super.get(key);
    if (value !== undefined) this.read.set(key, value);
    return value;
  }
}

const l1Attributes = (n: bigint) => testChainL1Attributes('lagoon', GENESIS_TIME, n);
const l1InfoDeposit = (n: bigint) => testChainL1InfoDeposit('lagoon', GENESIS_TIME, n);

async function genesis() {
  const word = (value: bigint) => pad(numberToHex(value), { size: 32 });
  return genesisWitness({
    [user.address]: { balance: numberToHex(10n ** 20n) },
    [L1_BLOCK]: {
      nonce: '0x1',
      storage: Object.fromEntries(l1BlockStorage(l1Attributes(0n)).map(({ index, value }) => [word(index), word(value)])),
    },
    [MESSAGE_PASSER]: { nonce: '0x1' },
    ...Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [
        privateKeyToAccount(keccak256(stringToHex(`flashlog lagoon chain bystander ${i}`))).address,
        { balance: numberToHex(10n ** 18n + BigInt(i)) },
      ]),
    ),
  });
}

function genesisHeader(stateRoot: Hex): BlockHeader {
  return {
    parentHash: `0x${'00'.repeat(32)}`,
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    miner: FEE_RECIPIENT,
    stateRoot,
    transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot,
    logsBloom: `0x${'00'.repeat(256)}`,
    difficulty: 0n,
    number: 0n,
    gasLimit: GAS_LIMIT,
    gasUsed: 0n,
    timestamp: GENESIS_TIME,
    extraData: concat(['0x01', eip1559Params, numberToHex(0n, { size: 8 })]),
    mixHash: `0x${'00'.repeat(32)}`,
    nonce: '0x0000000000000000',
    baseFeePerGas: 1_000_000n,
    withdrawalsRoot: emptyTrieRoot,
    blobGasUsed: 0n,
    excessBlobGas: 0n,
    parentBeaconBlockRoot: `0x${'00'.repeat(32)}`,
    requestsHash: '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  };
}

async function usersOf(block: PlannedBlock, nonce: { next: number }): Promise<Hex[]> {
  const users: Hex[] = [];
  for (const tx of block.users)
    users.push(
      await user.signTransaction({
        type: 'eip1559',
        chainId: CHAIN_ID,
        nonce: nonce.next++,
        to: tx.to,
        value: tx.value ?? 0n,
        data: tx.data ?? '0x',
        gas: tx.gas,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1_000n,
      }),
    );
  return users;
}

function attributesOf(block: PlannedBlock, users: readonly Hex[]): PayloadAttributes {
  const refunds = block.refunds.map(([index, gasRefund]) => ({ index, gasRefund }));
  return {
    timestamp: GENESIS_TIME + block.number * BLOCK_TIME,
    prevRandao: keccak256(stringToHex(`flashlog lagoon chain randao ${block.number}`)),
    feeRecipient: FEE_RECIPIENT,
    gasLimit: GAS_LIMIT,
    parentBeaconBlockRoot: keccak256(stringToHex(`flashlog lagoon chain beacon ${block.number}`)),
    eip1559Params,
    minBaseFee: 0n,
    transactions: [
      l1InfoDeposit(block.number),
      ...users,
      ...(refunds.length ? [encodePostExecTx({ version: 1, blockNumber: block.number, gasRefundEntries: refunds }).raw] : []),
    ],
  };
}

/** Builds the chain; `stateAfter` hands back the state manager executeBlock made for the block just built. */
export async function buildLagoonChain(
  stateAfter: () => MerkleStateManager,
  planned: readonly PlannedBlock[] = lagoonPlan,
): Promise<{ genesis: BlockHeader; blocks: LagoonChainBlock[] }> {
  const start = await genesis();
  const first = genesisHeader(start.stateRoot);
  let parent = first;
  let full: Map<Hex, Uint8Array> = start.witness;
  const nonce = { next: 0 };
  const blocks: LagoonChainBlock[] = [];
  for (const block of planned) {
    const attributes = attributesOf(block, await usersOf(block, nonce));
    const witness = new RecordingWitness(full);
    const executed = await executeBlock({ config, parent, attributes, witness });
    blocks.push({
      ...block,
      parent,
      parentState: full,
      attributes,
      header: executed.header,
      hash: executed.hash,
      receipts: executed.receipts,
      fork: executed.rules.fork,
      witness: new Map(witness.read),
      fullStateSize: full.size,
    });
    full = new Map();
    await addStateNodes(stateAfter(), full);
    parent = executed.header;
  }
  return { genesis: first, blocks };
}

/** A block as a fixture in the op-blocks format (shared/fixtures/op-blocks/SOURCE.md). */
export function fixtureJson(block: LagoonChainBlock) {
  const { attributes } = block;
  return {
    source: "flashlog's stateless engine (test/helpers/lagoon-chain.ts), not an OP node: no Lagoon client runs here",
    chainId: CHAIN_ID,
    blockNumber: Number(block.number),
    rollupConfig,
    parentHeader: headerToRpc(block.parent),
    payload: {
      timestamp: numberToHex(attributes.timestamp),
      prevRandao: attributes.prevRandao,
      feeRecipient: attributes.feeRecipient,
      parentBeaconBlockRoot: attributes.parentBeaconBlockRoot,
      gasLimit: numberToHex(attributes.gasLimit),
      eip1559Params: attributes.eip1559Params,
      minBaseFee: numberToHex(attributes.minBaseFee!),
      transactions: attributes.transactions,
    },
    expected: { blockHash: block.hash, header: headerToRpc(block.header) },
    preimages: Object.fromEntries(
      [...block.witness].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => [key, bytesToHex(value)]),
    ),
  };
}
