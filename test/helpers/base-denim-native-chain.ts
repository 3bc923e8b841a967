/**
 * Base's own Denim chain (base/base `denim_native.rs`; test/fixtures/base-denim-native/SOURCE.md),
 * rebuilt from its inputs with flashlog's stateless engine: the L1 and L2 genesis headers, the
 * genesis state (the BaseTime proxy and the message passer), the agreed block #1 as the Rust fixture
 * writes it by hand, then blocks 2-7 executed by `executeBlock`, each from the L1-info deposit
 * flashlog's derivation builds and the BaseTime deposit `baseTimeDeposit` builds. Each block keeps
 * the witness of only the trie nodes and code building it read, so it can be re-executed alone.
 *
 * The inputs are data (chain.json: the rollup config, the genesis alloc with the proxy's runtime code,
 * the BaseTime implementation's runtime code, the batcher key); the schedule of blocks is
 * vectors.json's, the frozen values this chain must reproduce.
 */
import { readFileSync } from 'node:fs';
import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { bytesToHex, numberToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { encodeDeposit } from '../../src/op/deposit-tx.ts';
import { l1BlockInfoOf, l1InfoDeposit, l1InfoFormAt } from '../../src/derive/l1-info-deposit.ts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import { baseTimeDeposit } from '../../src/op/basetime.ts';
import { executeBlock, type PayloadAttributes } from '../../src/evm/op/execute-block.ts';
import { headerHash, headerToRpc, type BlockHeader } from '../../src/op/header.ts';
import { orderedTrieRoot, type Receipt } from '../../src/evm/op/receipts.ts';
import { parseRollupConfig, rulesAt, type OpFork } from '../../src/op/rollup-config.ts';
import { emptyTrieRoot } from '../../src/evm/op/witness-state.ts';
import { addStateNodes, genesisWitness } from './full-state-witness.ts';

const fixtureDir = new URL('../fixtures/base-denim-native/', import.meta.url);
const readJson = (name: string) => JSON.parse(readFileSync(new URL(name, fixtureDir), 'utf8')) as unknown;

export interface BaseDenimVectors {
  chain: {
    l2ChainId: number;
    blockTime: number;
    denimTime: number;
    l1Genesis: { number: number; timestamp: number; gasLimit: number; baseFeePerGas: number };
    l2Genesis: { number: number; timestamp: number; gasLimit: number; baseFeePerGas: number };
    agreed: { number: number; timestamp: number; gasLimit: number; baseFeePerGas: number };
    denimGasLimit: number;
    claimBlock: number;
    messagePasserStorageRoot: Hex;
  };
  scheduleId: Hex;
  blocks: {
    number: number;
    timestamp: number;
    timestampMillisPart: number;
    blockHash: Hex;
    stateRoot: Hex;
    outputRoot: Hex;
    baseTimeTransaction: Hex;
    baseTimeReceipt: Hex;
  }[];
}
export interface BaseDenimChainInputs {
  rollupConfig: Record<string, unknown>;
  batcherPrivateKey: Hex;
  feeRecipient: Hex;
  l2GenesisAlloc: Record<string, { nonce?: string; code?: string; storage?: Record<string, string> }>;
}
export const vectors = readJson('vectors.json') as BaseDenimVectors;
export const inputs = readJson('chain.json') as BaseDenimChainInputs;
export const config = parseRollupConfig(inputs.rollupConfig, 'chain.json rollupConfig');

const zero32: Hex = `0x${'00'.repeat(32)}`;
const emptyOmmers: Hex = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';

/** A header with the Rust fixture's defaults (alloy `Header::default()`: empty roots, zero hashes and beneficiary, no extra data). */
function defaultHeader(fields: Partial<BlockHeader> & Pick<BlockHeader, 'number' | 'timestamp' | 'gasLimit'>): BlockHeader {
  return {
    parentHash: zero32,
    sha3Uncles: emptyOmmers,
    miner: `0x${'00'.repeat(20)}`,
    stateRoot: emptyTrieRoot,
    transactionsRoot: emptyTrieRoot,
    receiptsRoot: emptyTrieRoot,
    logsBloom: `0x${'00'.repeat(256)}`,
    difficulty: 0n,
    gasUsed: 0n,
    extraData: '0x',
    mixHash: zero32,
    nonce: '0x0000000000000000',
    ...fields,
  };
}

export const l1Genesis = defaultHeader({
  number: BigInt(vectors.chain.l1Genesis.number),
  timestamp: BigInt(vectors.chain.l1Genesis.timestamp),
  gasLimit: BigInt(vectors.chain.l1Genesis.gasLimit),
  baseFeePerGas: BigInt(vectors.chain.l1Genesis.baseFeePerGas),
});
export const l2Genesis = defaultHeader({
  number: BigInt(vectors.chain.l2Genesis.number),
  timestamp: BigInt(vectors.chain.l2Genesis.timestamp),
  gasLimit: BigInt(vectors.chain.l2Genesis.gasLimit),
  baseFeePerGas: BigInt(vectors.chain.l2Genesis.baseFeePerGas),
});
export const batcher = privateKeyToAccount(inputs.batcherPrivateKey).address;

/** The SystemConfig of the Rust fixture: its batcher, the gas limit, every fee field zero. */
const systemConfig = (gasLimit: bigint): SystemConfig => ({
  batcher,
  overhead: zero32,
  scalar: zero32,
  gasLimit,
  eip1559Params: '0x0000000000000000',
  operatorFeeParams: zero32,
  minBaseFee: 0n,
  daFootprintGasScalar: 0,
});

/**
 * The L1-info deposit of L2 block `number` (timestamp `timestamp`, parent timestamp `parentTimestamp`):
 * L1 origin the L1 genesis, sequence number `number - 1`, as flashlog's derivation writes it under the
 * block's rules (on this chain no OP fork is active: Bedrock's form, 150M gas, a system transaction).
 */
export function l1InfoDepositOf(number: bigint, timestamp: bigint, parentTimestamp: bigint, gasLimit: bigint): Hex {
  const rules = rulesAt(config, timestamp, parentTimestamp);
  const origin = {
    hash: headerHash(l1Genesis),
    number: l1Genesis.number,
    timestamp: l1Genesis.timestamp,
    baseFeePerGas: l1Genesis.baseFeePerGas!,
    blobBaseFee: null,
  };
  return encodeDeposit(l1InfoDeposit(l1BlockInfoOf(origin, number - 1n, systemConfig(gasLimit), l1InfoFormAt(rules)), rules));
}

/** The genesis state and its witness: the BaseTime proxy (ProxyAdmin as admin) and the message passer. */
export const genesisState = () => genesisWitness(inputs.l2GenesisAlloc);

/**
 * The agreed block #1 as the Rust fixture writes it (it is not executed there): its L1-info deposit
 * in the transactions root, the genesis state root, an empty receipts root, no gas used.
 */
export async function agreedHeader(stateRoot: Hex): Promise<BlockHeader> {
  const { agreed } = vectors.chain;
  const l1Info = l1InfoDepositOf(BigInt(agreed.number), BigInt(agreed.timestamp), l2Genesis.timestamp, BigInt(agreed.gasLimit));
  return defaultHeader({
    parentHash: headerHash(l2Genesis),
    stateRoot,
    transactionsRoot: await orderedTrieRoot([l1Info]),
    number: BigInt(agreed.number),
    timestamp: BigInt(agreed.timestamp),
    gasLimit: BigInt(agreed.gasLimit),
    baseFeePerGas: BigInt(agreed.baseFeePerGas),
  });
}

export interface BaseDenimBlock {
  readonly number: bigint;
  readonly millisPart: number;
  readonly parent: BlockHeader;
  readonly attributes: PayloadAttributes;
  readonly header: BlockHeader;
  readonly hash: Hex;
  readonly receipts: readonly Receipt[];
  readonly fork: OpFork | 'bedrock';
  readonly messagePasserStorageRoot: Hex;
  /** The trie nodes and code building the block read. */
  readonly witness: ReadonlyMap<Hex, Uint8Array>;
}

class RecordingWitness extends Map<Hex, Uint8Array> {
  readonly read = new Map<Hex, Uint8Array>();
  override get(key: Hex): Uint8Array | undefined {
    const value = super.get(key);
    if (value !== undefined) this.read.set(key, value);
    return value;
  }
}

/**
 * Builds blocks 2-7 on the agreed block. `stateAfter` hands back the state the engine left after the
 * block it just executed (the test captures the state manager `executeBlock` creates): its nodes are
 * the next block's full witness.
 */
export async function buildBaseDenimChain(
  stateAfter: () => MerkleStateManager,
): Promise<{ agreed: BlockHeader; blocks: BaseDenimBlock[] }> {
  const start = await genesisState();
  const agreed = await agreedHeader(start.stateRoot);
  let parent = agreed;
  let full: Map<Hex, Uint8Array> = start.witness;
  const blocks: BaseDenimBlock[] = [];
  for (const planned of vectors.blocks) {
    const number = BigInt(planned.number);
    const timestamp = BigInt(planned.timestamp);
    const gasLimit = BigInt(vectors.chain.denimGasLimit);
    const attributes: PayloadAttributes = {
      timestamp,
      prevRandao: l1Genesis.mixHash,
      feeRecipient: inputs.feeRecipient,
      gasLimit,
      transactions: [
        l1InfoDepositOf(number, timestamp, parent.timestamp, gasLimit),
        baseTimeDeposit({ blockNumber: number, millisPart: planned.timestampMillisPart }),
      ],
    };
    const witness = new RecordingWitness(full);
    const executed = await executeBlock({ config, parent, attributes, witness });
    blocks.push({
      number,
      millisPart: planned.timestampMillisPart,
      parent,
      attributes,
      header: executed.header,
      hash: executed.hash,
      receipts: executed.receipts,
      fork: executed.rules.fork,
      messagePasserStorageRoot: await executed.messagePasserStorageRoot(),
      witness: new Map(witness.read),
    });
    full = new Map();
    await addStateNodes(stateAfter(), full);
    parent = executed.header;
  }
  return { agreed, blocks };
}

/** A block as a fixture in the op-blocks format (shared/fixtures/op-blocks/SOURCE.md), for `flashlog execute-block`. */
export function fixtureJson(block: BaseDenimBlock, expectedHash: Hex) {
  const { attributes } = block;
  return {
    source:
      'base/base denim_native.rs chain, rebuilt by test/helpers/base-denim-native-chain.ts; the expected hash is the frozen upstream one',
    chainId: config.l2_chain_id,
    blockNumber: Number(block.number),
    rollupConfig: inputs.rollupConfig,
    parentHeader: headerToRpc(block.parent),
    payload: {
      timestamp: numberToHex(attributes.timestamp),
      prevRandao: attributes.prevRandao,
      feeRecipient: attributes.feeRecipient,
      gasLimit: numberToHex(attributes.gasLimit),
      transactions: attributes.transactions,
    },
    expected: { blockHash: expectedHash },
    preimages: Object.fromEntries(
      [...block.witness].sort(([a], [b]) => a.localeCompare(b)).map(([key, value]) => [key, bytesToHex(value)]),
    ),
  };
}
