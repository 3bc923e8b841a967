/**
 * A real pair of chains whose L2 is exactly what derivation from the L1 gives, for testing
 * derivation and `flashlog prove` end to end:
 *
 * - the L1: EDR's L1 chain type on Prague (blob transactions), with the deposit contract
 *   (devnet/contracts/DevnetPortal.sol: the OptimismPortal's `TransactionDeposited` event) and a
 *   SystemConfig (contracts/DerivedChainSystemConfig.sol: its `ConfigUpdate` event) in its genesis,
 *   and the batcher, the user, the depositor and the SystemConfig's sender funded; one block every
 *   `l1BlockTime` seconds, mined with explicit timestamps, besides the batcher's own blocks;
 * - the L2: op-geth on a fresh OP genesis (every fork through Isthmus, and Jovian by default, at
 *   time 0), whose every block is built through the engine API from the payload attributes
 *   flashlog's derivation code gives for its L1 origin (derived-chain-sequencer.ts);
 * - flashlog's devnet batcher posting the L2 blocks to the L1's batch inbox (calldata or blobs,
 *   singular or span batches, zlib or brotli), and the beacon blob endpoint serving its blobs.
 *
 * What the chains hold is derived-chain-scenario.ts: deposits (with and without mint, a creation,
 * a contract call) and one SystemConfig update of every kind on L1, landing on their epoch's first
 * L2 block; user transactions in some L2 blocks, none in others.
 */
import { concat, keccak256, numberToHex, pad, parseEther, stringToHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createBatcher, type Batcher, type PostedBatch } from '../../devnet/batcher.ts';
import { startBeaconBlobServer, type BeaconBlobServer } from '../../devnet/beacon-blobs.ts';
import type { BatchKind, BatcherTarget } from '../../src/derive/channel-out.ts';
import type { CompressionAlgo } from '../../src/derive/channel.ts';
import type { SystemConfig } from '../../src/derive/system-config.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';
import { createLogger, type Logger } from '../../src/obs/logger.ts';
import { compileOracleContracts } from '../oracle/chain.ts';
import { DevnetPortal } from '../../devnet/contracts/bytecode.ts';
import {
  compileHelperContract,
  eip1559,
  l2Genesis,
  rollupJson,
  type CompiledContract,
  type DerivedRollupJson,
} from './derived-chain-genesis.ts';
import { startDerivedL1, type DerivedL1, type L1BlockRef } from './derived-chain-l1.ts';
import { derivedChainScenario } from './derived-chain-scenario.ts';
import { createSequencer, type DerivedL2Block } from './derived-chain-sequencer.ts';
import { ecotoneScalar } from './l1-logs.ts';
import { startOpGeth, type OpGethNode } from './op-geth.ts';
import { goPrograms } from './strict-clients.ts';

export type { DerivedL2Block } from './derived-chain-sequencer.ts';
export type { DerivedRollupJson } from './derived-chain-genesis.ts';

export interface DerivedChainOptions {
  /** L2 blocks to build after genesis, a multiple of `blocksPerChannel` (default 20). */
  readonly blocks?: number;
  /** L2 blocks in each channel the batcher posts (default 5). */
  readonly blocksPerChannel?: number;
  /** Default calldata. */
  readonly target?: BatcherTarget;
  /** Default span. */
  readonly kind?: BatchKind;
  /** Default zlib. */
  readonly compression?: CompressionAlgo;
  /** Seconds (default 2). */
  readonly l2BlockTime?: number;
  /** Seconds between the L1 blocks the sequencer mines (default 12). */
  readonly l1BlockTime?: number;
  /** Jovian from genesis (default true): the L1-info deposit takes the Jovian form. */
  readonly jovian?: boolean;
  /** op-geth's binary (default: test/go/build.sh's). */
  readonly opGeth?: string;
  /** For the batcher and the beacon endpoint (default: silent, or FLASHLOG_TEST_LOG_LEVEL). */
  readonly logger?: Logger;
}

/** One batcher transaction on the L1. */
export interface DerivedBatch extends PostedBatch {
  readonly l1BlockHash: Hex;
}

export interface DerivedChain {
  readonly l1RpcUrl: string;
  readonly l2RpcUrl: string;
  readonly beaconUrl: string;
  readonly l1ChainId: number;
  readonly l2ChainId: number;
  /** op-node's rollup.json for the L2 (src/op/rollup-config.ts reads it). */
  readonly rollupConfig: DerivedRollupJson;
  /** The L2 genesis block. */
  readonly l2Genesis: { readonly hash: Hex; readonly timestamp: bigint; readonly l1Origin: L1BlockRef };
  /** The L2 blocks built, in order from block 1. */
  readonly l2Blocks: readonly DerivedL2Block[];
  /** The batcher transactions, in the order the L1 included them. */
  readonly batches: readonly DerivedBatch[];
  /** The L1 blocks holding deposits. */
  readonly depositBlocks: readonly L1BlockRef[];
  /** The L1 blocks holding SystemConfig updates (derived-chain-scenario.ts `systemConfigUpdates`). */
  readonly systemConfigBlocks: readonly L1BlockRef[];
  readonly keys: typeof derivedChainKeys;
  readonly addresses: { readonly portal: Address; readonly batchInbox: Address; readonly l1SystemConfig: Address };
  /** The running nodes, for reads a test needs. The chains are complete: nothing mines any more. */
  readonly l1: DerivedL1;
  readonly l2: OpGethNode;
  /** Stops op-geth, the beacon endpoint and the L1; a second call does nothing. */
  close(): Promise<void>;
}

const key = (name: string) => keccak256(stringToHex(`flashlog derived chain ${name}`));
/** The chain's keys, fixed so every run signs with the same accounts. */
export const derivedChainKeys = {
  batcher: key('batcher'),
  user: key('user'),
  depositor: key('depositor'),
  /** Holds nothing until a deposit mints to it. */
  depositRecipient: key('deposit recipient'),
  /** Sends the L1 SystemConfig's updates. */
  systemConfigOwner: key('system config owner'),
} as const;

const l1ChainId = 900;
const l2ChainId = 42_069;
const portal: Address = '0x0000000000000000000000000000000000042001';
/** DerivedChainSystemConfig.sol: emits the ConfigUpdate events derivation reads. */
const l1SystemConfig: Address = '0x0000000000000000000000000000000000042002';
const batchInbox: Address = '0xff00000000000000000000000000000000042069';
const gasLimit = 30_000_000n;
const maxSequencerDrift = 600;
/** Base's fee scalars and a small operator fee (Jovian: gas × scalar × 100 + constant). */
const feeScalars = { base: 1368, blob: 810_949 } as const;
const operatorFee = { scalar: 7, constant: 500n } as const;

/**
 * Starts both chains, builds the L2 blocks and posts them all; resolves once every batch is on L1.
 *
 * @example const chain = await startDerivedChain({ target: 'blob', kind: 'span', compression: 'brotli' })
 */
export async function startDerivedChain(options: DerivedChainOptions = {}): Promise<DerivedChain> {
  const count = options.blocks ?? 20;
  const perChannel = options.blocksPerChannel ?? 5;
  if (!Number.isInteger(perChannel) || perChannel < 1)
    throw new RangeError(`blocksPerChannel: expected a positive integer, got ${perChannel}`);
  if (!Number.isInteger(count) || count < perChannel || count % perChannel !== 0)
    throw new RangeError(`blocks: expected a positive multiple of blocksPerChannel (${perChannel}), got ${count}`);
  const l2BlockTime = BigInt(options.l2BlockTime ?? 2);
  const l1BlockTime = BigInt(options.l1BlockTime ?? 12);
  const jovian = options.jovian ?? true;
  const logger = options.logger ?? createLogger({ level: process.env.FLASHLOG_TEST_LOG_LEVEL ?? 'silent', name: 'derived-chain' });
  const accounts = Object.fromEntries(Object.entries(derivedChainKeys).map(([name, k]) => [name, privateKeyToAccount(k)])) as Accounts;
  const contracts = {
    portal: DevnetPortal as CompiledContract,
    systemConfig: compileHelperContract('DerivedChainSystemConfig.sol', 'DerivedChainSystemConfig'),
    ...compileOracleContracts(),
  };
  const cleanup: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    const l1 = await startDerivedL1({
      chainId: l1ChainId,
      portal,
      portalContract: contracts.portal,
      contracts: [{ address: l1SystemConfig, contract: contracts.systemConfig }],
      funded: [accounts.batcher, accounts.user, accounts.depositor, accounts.systemConfigOwner].map((account) => ({
        address: account.address,
        balance: parseEther('1000'),
      })),
    });
    cleanup.push(() => l1.close());
    if ((options.target ?? 'calldata') === 'blob') await l1.warmUpBlobs(accounts.depositor);
    // The L1 block the L2 starts from, then the L2 genesis on its timestamp.
    const l1Genesis = await l1.mine((await l1.head()).timestamp + l1BlockTime);
    const systemConfig = genesisSystemConfig(accounts.batcher.address, jovian);
    const l2Start = await startL2({
      ...options,
      jovian,
      l2BlockTime,
      l1,
      l1Genesis,
      systemConfig,
      accounts,
      l1Block: contracts.OracleL1Block,
    });
    cleanup.push(() => l2Start.l2.close());
    const { l2, l2GenesisHash, rollupConfig } = l2Start;

    const batcher = createBatcher({
      l1RpcUrl: l1.edr.url,
      key: derivedChainKeys.batcher,
      inbox: batchInbox,
      everyBlocks: perChannel,
      target: options.target ?? 'calldata',
      kind: options.kind ?? 'span',
      compression: options.compression ?? 'zlib',
      chain: { chainId: BigInt(l2ChainId), l2GenesisTime: l1Genesis.timestamp, blockTime: l2BlockTime },
      logger,
      retryMs: 200,
      keepPosted: 10_000,
    });
    cleanup.push(() => batcher.stop());
    const beacon: BeaconBlobServer = await startBeaconBlobServer({
      host: '127.0.0.1',
      port: 0,
      l1: createUpstream(l1.edr.url, { timeoutMs: 10_000 }),
      posted: batcher.posted,
      logger,
    });
    cleanup.push(() => beacon.close());

    const sequencer = createSequencer({
      l1,
      l2,
      rules: { rollup: parseRollupConfig(rollupConfig), depositContract: portal, systemConfig: l1SystemConfig },
      genesis: { hash: l2GenesisHash, timestamp: l1Genesis.timestamp, l1Origin: l1Genesis },
      systemConfig,
      maxSequencerDrift: BigInt(maxSequencerDrift),
    });
    const plan = derivedChainScenario({
      accounts,
      probe: contracts.OracleProbe,
      systemConfig: { address: l1SystemConfig, abi: contracts.systemConfig.abi },
      l1,
      l2ChainId,
      jovian,
    });
    const l1Blocks = { deposits: [] as L1BlockRef[], systemConfig: [] as L1BlockRef[] };
    let nextL1 = 1n;
    for (let n = 1n; n <= BigInt(count); n++) {
      const timestamp = l1Genesis.timestamp + n * l2BlockTime;
      // The L1 blocks due by this L2 block's time, with the deposits and updates planned for them.
      for (; l1Genesis.timestamp + nextL1 * l1BlockTime <= timestamp; nextL1++) {
        const { deposits, updates } = await plan.l1TransactionsFor(nextL1);
        const mined = await l1.mine(l1Genesis.timestamp + nextL1 * l1BlockTime, [...deposits, ...updates]);
        if (deposits.length) l1Blocks.deposits.push(mined);
        if (updates.length) l1Blocks.systemConfig.push(mined);
      }
      const block = await sequencer.build(timestamp, await plan.userTransactionsFor(n, l2));
      // A channel is complete: its batcher transaction goes in an L1 block at this L2 block's time
      // (later ones, if any, follow EDR's clock from there), so L1 time never runs off with the
      // machine's load.
      if (n % BigInt(perChannel) === 0n) await l1.nextBlockAt(timestamp);
      batcher.add({ number: block.number, parentHash: block.parentHash, timestamp: block.timestamp, transactions: block.transactions });
      await postedUpTo(batcher, block.number, perChannel);
    }
    await batcher.stop();
    return {
      l1RpcUrl: l1.edr.url,
      l2RpcUrl: l2.url,
      beaconUrl: beacon.url,
      l1ChainId,
      l2ChainId,
      rollupConfig,
      l2Genesis: { hash: l2GenesisHash, timestamp: l1Genesis.timestamp, l1Origin: l1Genesis },
      l2Blocks: sequencer.blocks,
      batches: await batchesOnL1(l1, batcher, l1Genesis.number + 1n),
      depositBlocks: l1Blocks.deposits,
      systemConfigBlocks: l1Blocks.systemConfig,
      keys: derivedChainKeys,
      addresses: { portal, batchInbox, l1SystemConfig },
      l1,
      l2,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

type Accounts = Record<keyof typeof derivedChainKeys, PrivateKeyAccount>;

/** The SystemConfig at L2 genesis: the batcher, Base's fee scalars, a small operator fee, OP Mainnet's EIP-1559 parameters. */
function genesisSystemConfig(batcher: Address, jovian: boolean): SystemConfig {
  return {
    batcher,
    overhead: `0x${'00'.repeat(32)}`,
    scalar: ecotoneScalar(feeScalars.base, feeScalars.blob),
    gasLimit,
    eip1559Params: concat([numberToHex(eip1559.denominatorCanyon, { size: 4 }), numberToHex(eip1559.elasticity, { size: 4 })]),
    // Isthmus: operatorFeeScalar u32 at byte 20, operatorFeeConstant u64 at 24.
    operatorFeeParams: pad(concat([numberToHex(operatorFee.scalar, { size: 4 }), numberToHex(operatorFee.constant, { size: 8 })]), {
      size: 32,
    }),
    minBaseFee: jovian ? 1_000_000n : 0n,
    daFootprintGasScalar: 0,
  };
}

/** op-geth on the L2 genesis (its L1Block holding the L1 genesis block's values), and the rollup config deriving it. */
async function startL2(options: {
  readonly opGeth?: string;
  readonly jovian: boolean;
  readonly l2BlockTime: bigint;
  readonly l1: DerivedL1;
  readonly l1Genesis: L1BlockRef;
  readonly systemConfig: SystemConfig;
  readonly accounts: Accounts;
  readonly l1Block: { readonly deployedBytecode: Hex };
}): Promise<{ l2: OpGethNode; l2GenesisHash: Hex; rollupConfig: DerivedRollupJson }> {
  const { l1Genesis, systemConfig, jovian } = options;
  const l1GenesisEpoch = await options.l1.epoch(l1Genesis.number);
  const opGeth = options.opGeth ?? goPrograms().opGeth;
  const genesis = await l2Genesis(opGeth, {
    chainId: l2ChainId,
    timestamp: l1Genesis.timestamp,
    jovianTime: jovian ? 0n : undefined,
    gasLimit,
    l1Block: options.l1Block.deployedBytecode,
    l1Attributes: {
      l1Number: l1Genesis.number,
      l1Timestamp: l1Genesis.timestamp,
      l1BaseFee: l1GenesisEpoch.header.baseFeePerGas,
      l1BlobBaseFee: l1GenesisEpoch.header.blobBaseFee ?? 1n,
      l1Hash: l1Genesis.hash,
      sequenceNumber: 0n,
      batcherHash: pad(systemConfig.batcher, { size: 32 }),
      baseFeeScalar: feeScalars.base,
      blobBaseFeeScalar: feeScalars.blob,
      operatorFeeScalar: operatorFee.scalar,
      operatorFeeConstant: operatorFee.constant,
    },
    minBaseFee: systemConfig.minBaseFee,
    funded: [{ address: options.accounts.user.address, balance: parseEther('100') }],
  });
  const l2 = await startOpGeth(opGeth, genesis);
  try {
    const l2GenesisHash = (await l2.rpc<{ hash: Hex }>('eth_getBlockByNumber', ['0x0', false])).hash;
    const rollupConfig = rollupJson({
      l2ChainId,
      l1ChainId,
      blockTime: Number(options.l2BlockTime),
      jovian,
      genesis: { l1: l1Genesis, l2: { hash: l2GenesisHash, number: 0n }, l2Time: l1Genesis.timestamp },
      systemConfig,
      batchInbox,
      portal,
      l1SystemConfig,
      seqWindowSize: 3600,
      maxSequencerDrift,
      channelTimeout: 300,
    });
    return { l2, l2GenesisHash, rollupConfig };
  } catch (error) {
    await l2.close();
    throw error;
  }
}

/**
 * The batcher's transactions with their L1 blocks' hashes. It is an invariant that the L1 holds
 * exactly the batcher transactions the batcher reports (whose blobs the beacon endpoint serves):
 * a post it retried after its transaction landed would leave a channel twice, one of them with
 * blobs nobody serves.
 */
async function batchesOnL1(l1: DerivedL1, batcher: Batcher, fromBlock: bigint): Promise<DerivedBatch[]> {
  const onL1 = await l1.batcherTransactions(batchInbox, privateKeyToAccount(derivedChainKeys.batcher).address, fromBlock);
  const reported = batcher.posted().map((posted) => posted.l1TransactionHash);
  if (JSON.stringify(onL1) !== JSON.stringify(reported))
    throw new Error(`the L1 holds batcher transactions ${onL1.join(', ')}; the batcher reports ${reported.join(', ')}`);
  const batches: DerivedBatch[] = [];
  for (const posted of batcher.posted()) batches.push({ ...posted, l1BlockHash: (await l1.block(posted.l1BlockNumber))!.hash });
  return batches;
}

/** Waits until the batcher has posted every whole channel up to L2 block `number`. */
async function postedUpTo(batcher: Batcher, number: bigint, perChannel: number): Promise<void> {
  if (number % BigInt(perChannel) !== 0n) return;
  const deadline = Date.now() + 60_000;
  while ((batcher.posted().at(-1)?.l2Blocks[1] ?? 0n) < number) {
    if (Date.now() > deadline) throw new Error(`the batcher did not post L2 blocks up to ${number} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
