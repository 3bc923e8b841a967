/**
 * A Base-ladder devnet chain built by flashlog's stateless engine across Denim's activation:
 * Jovian, Azul, Beryl and Cobalt from genesis, Denim from block 4. Every block is built with
 * `executeBlock` over the whole state (genesis, then the engine's own state after each block), and
 * keeps the witness of only the trie nodes and code that building it read, so it can be
 * re-executed statelessly from that alone. test/integration/denim-chain-build.test.ts builds it and
 * writes test/fixtures/denim-chain/ (see SOURCE.md there); denim-chain.test.ts re-executes those.
 *
 * Blocks 1-3 are 2 s apart; block 4 is Denim's first (millisecond part 0, gas limit ÷ 10, EIP-1559
 * denominator × 10, BaseTime installed); blocks 4-8 share one header second at +200 ms each, 9-10
 * start the next. tx[0] is the L1-info deposit (Jovian form), tx[1] of every Denim block the BaseTime
 * deposit, built by the function the Denim devnet uses (`baseTimeDeposit`), then user transactions:
 * transfers, a contract creation and calls of a contract reading BaseTime's `timestampMs()`.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import {
  bytesToHex,
  concat,
  encodeFunctionData,
  getContractAddress,
  keccak256,
  numberToHex,
  pad,
  parseAbi,
  slice,
  stringToHex,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { baseTimeDeposit, BASE_TIME_PREDEPLOY } from '../../src/op/basetime.ts';
import { DevnetBaseTime } from '../../devnet/contracts/bytecode.ts';
import { denimGasParameters } from '../../src/derive/attributes.ts';
import { l1BlockStorage } from '../../devnet/deposit.ts';
import { executeBlock, type PayloadAttributes } from '../../src/evm/op/execute-block.ts';
import { headerToRpc, type BlockHeader } from '../../src/op/header.ts';
import type { Receipt } from '../../src/evm/op/receipts.ts';
import { forksAtGenesis, parseRollupConfig } from '../../src/op/rollup-config.ts';
import { emptyTrieRoot } from '../../src/evm/op/witness-state.ts';
import { addStateNodes, genesisWitness } from './full-state-witness.ts';
import { testChainL1Attributes, testChainL1InfoDeposit } from './test-chain-l1.ts';

export const CHAIN_ID = 84_538_453;
export const GENESIS_TIME = 1_800_000_000n;
export const BLOCK_TIME = 2n;
export const DENIM_BLOCK = 4n;
export const DENIM_TIME = GENESIS_TIME + DENIM_BLOCK * BLOCK_TIME;
export const GAS_LIMIT = 30_000_000n;
export const EIP1559 = { elasticity: 6, denominator: 250 } as const;
export const MIN_BASE_FEE = 990_000n;
const FEE_RECIPIENT: Hex = '0x4200000000000000000000000000000000000011';
const PROXY_ADMIN: Hex = '0x4200000000000000000000000000000000000018';
const MESSAGE_PASSER: Hex = '0x4200000000000000000000000000000000000016';
const L1_BLOCK: Hex = '0x4200000000000000000000000000000000000015';
/** EIP-1967's admin slot. */
const ADMIN_SLOT: Hex = '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103';

/**
 * The rollup config in kona's serde form, as the fixtures carry it. The BaseTime implementation the
 * activation installs is the Denim devnet's own contract (devnet/contracts/DevnetBaseTime.sol):
 * flashlog does not carry Base's.
 */
export const rollupConfig = {
  l2_chain_id: CHAIN_ID,
  block_time: Number(BLOCK_TIME),
  ...forksAtGenesis('jovian'),
  azul_time: 0,
  beryl_time: 0,
  cobalt_time: 0,
  denim_time: Number(DENIM_TIME),
  base_time_implementation_code: DevnetBaseTime.deployedBytecode,
  chain_op_config: { eip1559Elasticity: EIP1559.elasticity, eip1559Denominator: 50, eip1559DenominatorCanyon: EIP1559.denominator },
};
export const config = parseRollupConfig(rollupConfig);

export const user = privateKeyToAccount(keccak256(stringToHex('flashlog denim chain user')));
const recipients: readonly Hex[] = ['0x00000000000000000000000000000000000d1a01', '0x00000000000000000000000000000000000d1a02'];
export const reader = getContractAddress({ from: user.address, nonce: 0n });
export const readerAbi = parseAbi(['function read() returns (uint64)', 'event Read(uint64 timestampMs)']);

/** Compiles test/helpers/contracts/*.sol (solc, a devDependency). */
function compile(): { proxy: Hex; reader: Hex } {
  const require = createRequire(import.meta.url);
  const solc = require('solc') as { compile(input: string): string };
  const dir = join(import.meta.dirname, 'contracts');
  const files = ['DenimChainProxy.sol', 'BaseTimeReader.sol'];
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(files.map((file) => [file, { content: readFileSync(join(dir, file), 'utf8') }])),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  return {
    proxy: `0x${output.contracts['DenimChainProxy.sol']!.DenimChainProxy!.evm.deployedBytecode.object}`,
    reader: `0x${output.contracts['BaseTimeReader.sol']!.BaseTimeReader!.evm.bytecode.object}`,
  };
}

const l1Attributes = (n: bigint) => testChainL1Attributes('denim', GENESIS_TIME, n);
const l1InfoDeposit = (n: bigint) => testChainL1InfoDeposit('denim', GENESIS_TIME, n);

/** What block `n` holds beyond its system deposits: its user transactions, signed in order. */
type UserTx = { to: Hex | null; data?: Hex; value?: bigint; gas: bigint };
const transfer = (i: number, value = 1_000n): UserTx => ({ to: recipients[i % 2]!, value, gas: 21_000n });
const read: UserTx = { to: reader, data: encodeFunctionData({ abi: readerAbi, functionName: 'read' }), gas: 100_000n };

/** One block of the chain: its number, header second and millisecond part, and user transactions. */
export interface PlannedBlock {
  readonly number: bigint;
  readonly timestamp: bigint;
  /** The BaseTime millisecond part (Denim blocks), else undefined. */
  readonly millisPart: number | undefined;
  readonly users: readonly UserTx[];
}

function plan(readerCode: Hex): PlannedBlock[] {
  const pre = (number: bigint, users: UserTx[]): PlannedBlock => ({
    number,
    timestamp: GENESIS_TIME + number * BLOCK_TIME,
    millisPart: undefined,
    users,
  });
  const denim = (number: bigint, ms: bigint, users: UserTx[]): PlannedBlock => ({
    number,
    timestamp: DENIM_TIME + ms / 1000n,
    millisPart: Number(ms % 1000n),
    users,
  });
  return [
    pre(1n, [{ to: null, data: readerCode, gas: 400_000n }, transfer(0)]),
    pre(2n, [transfer(0), transfer(1)]),
    // Before Denim the BaseTime proxy has no implementation: the read reverts.
    pre(3n, [read, transfer(1)]),
    denim(4n, 0n, [read, transfer(0)]),
    denim(5n, 200n, [transfer(1)]),
    denim(6n, 400n, [read]),
    denim(7n, 600n, [transfer(0), transfer(1, 5n)]),
    denim(8n, 800n, [read]),
    denim(9n, 1_000n, [read, transfer(0)]),
    denim(10n, 1_200n, [transfer(1)]),
  ];
}

export interface DenimChainBlock extends PlannedBlock {
  readonly parent: BlockHeader;
  readonly attributes: PayloadAttributes;
  readonly header: BlockHeader;
  readonly hash: Hex;
  readonly receipts: readonly Receipt[];
  /** The preimages building the block read: the witness it re-executes from. */
  readonly witness: ReadonlyMap<Hex, Uint8Array>;
  /** The newest fork active at the block, as the engine ruled. */
  readonly fork: string;
  /** How many preimages the whole state before the block had. */
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

/**
 * The genesis state: the user funded, L1Block's fee storage, the BaseTime proxy with the ProxyAdmin
 * as admin, the message passer, and 32 funded accounts no block touches (so a block's witness is a
 * part of the state, not all of it).
 */
async function genesis(proxyCode: Hex) {
  const word = (value: bigint) => pad(numberToHex(value), { size: 32 });
  return genesisWitness({
    [user.address]: { balance: numberToHex(10n ** 20n) },
    [L1_BLOCK]: {
      nonce: '0x1',
      storage: Object.fromEntries(l1BlockStorage(l1Attributes(0n)).map(({ index, value }) => [word(index), word(value)])),
    },
    [BASE_TIME_PREDEPLOY]: { nonce: '0x1', code: proxyCode, storage: { [ADMIN_SLOT]: word(BigInt(PROXY_ADMIN)) } },
    [MESSAGE_PASSER]: { nonce: '0x1' },
    ...Object.fromEntries(
      Array.from({ length: 32 }, (_, i) => [
        privateKeyToAccount(keccak256(stringToHex(`flashlog denim chain bystander ${i}`))).address,
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
    extraData: concat(['0x01', eip1559Params(EIP1559.denominator), numberToHex(MIN_BASE_FEE, { size: 8 })]),
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

const eip1559Params = (denominator: number): Hex =>
  concat([numberToHex(denominator, { size: 4 }), numberToHex(EIP1559.elasticity, { size: 4 })]);

/** A planned block's user transactions, signed in order. */
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

/** The payload attributes of a planned block on `parent` (its gas limit and denominator from the parent, Denim's change on its first block). */
function attributesOf(block: PlannedBlock, parent: BlockHeader, users: readonly Hex[]): PayloadAttributes {
  // The parent's gas limit and EIP-1559 parameters; on Denim's first block scaled as derivation scales them.
  const inherited = { gasLimit: parent.gasLimit, eip1559Params: slice(parent.extraData, 1, 9) };
  const gas = block.number === DENIM_BLOCK ? denimGasParameters(inherited) : inherited;
  return {
    timestamp: block.timestamp,
    prevRandao: keccak256(stringToHex(`flashlog denim chain randao ${block.number}`)),
    feeRecipient: FEE_RECIPIENT,
    gasLimit: gas.gasLimit,
    parentBeaconBlockRoot: keccak256(stringToHex(`flashlog denim chain beacon ${block.number}`)),
    eip1559Params: gas.eip1559Params,
    minBaseFee: MIN_BASE_FEE,
    transactions: [
      l1InfoDeposit(block.number),
      ...(block.millisPart === undefined ? [] : [baseTimeDeposit({ blockNumber: block.number, millisPart: block.millisPart })]),
      ...users,
    ],
  };
}

/**
 * Builds the chain. `stateAfter` hands back the state the engine left after the block it just
 * executed (the test captures the state manager `executeBlock` creates): its nodes are the next
 * block's full witness.
 */
export async function buildDenimChain(
  stateAfter: () => MerkleStateManager,
  options: {
    /** Another source of each block's attributes (derivation's), given its user transactions. */
    readonly attributesOf?: (block: PlannedBlock, parent: BlockHeader, users: readonly Hex[]) => PayloadAttributes;
  } = {},
): Promise<{ genesis: BlockHeader; blocks: DenimChainBlock[] }> {
  const compiled = compile();
  const start = await genesis(compiled.proxy);
  const first = genesisHeader(start.stateRoot);
  let parent = first;
  let full: Map<Hex, Uint8Array> = start.witness;
  const nonce = { next: 0 };
  const blocks: DenimChainBlock[] = [];
  for (const planned of plan(compiled.reader)) {
    const attributes = (options.attributesOf ?? attributesOf)(planned, parent, await usersOf(planned, nonce));
    const witness = new RecordingWitness(full);
    const executed = await executeBlock({ config, parent, attributes, witness });
    blocks.push({
      ...planned,
      parent,
      attributes,
      header: executed.header,
      hash: executed.hash,
      receipts: executed.receipts,
      fork: executed.rules.fork,
      witness: new Map(witness.read),
      fullStateSize: full.size,
    });
    // Walking the state reads every node through `witness`: the block's own reads were copied above.
    full = new Map();
    await addStateNodes(stateAfter(), full);
    parent = executed.header;
  }
  return { genesis: first, blocks };
}

/** A block as a fixture in the op-blocks format (shared/fixtures/op-blocks/SOURCE.md). */
export function fixtureJson(block: DenimChainBlock) {
  const { attributes } = block;
  return {
    source: "flashlog's stateless engine (test/helpers/denim-chain.ts), not a Base node",
    chainId: CHAIN_ID,
    blockNumber: Number(block.number),
    timestampMs: (block.timestamp * 1000n + BigInt(block.millisPart ?? 0)).toString(),
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
