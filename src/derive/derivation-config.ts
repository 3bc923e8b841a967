import { pad, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import type { RollupConfig } from '../op/rollup-config.ts';
import type { L1BlockHeader } from './l1-source.ts';
import { defaultChannelTimeoutBedrock } from './rules.ts';
import type { SpanBatchChain } from './span-batch.ts';
import type { SystemConfig } from './system-config.ts';

/**
 * What derivation needs of a rollup config beyond execution (op-node's rollup.json fields), checked
 * present once, with the L1's blob schedule.
 */
export interface DerivationConfig {
  readonly rollup: RollupConfig;
  readonly genesisL1Number: bigint;
  readonly batchInbox: Hex;
  readonly depositContract: Hex;
  readonly systemConfigAddress: Hex;
  readonly seqWindowSize: bigint;
  readonly maxSequencerDrift: bigint;
  readonly channelTimeoutBedrock: number;
  readonly spanBatchChain: SpanBatchChain;
  readonly genesisSystemConfig: SystemConfig;
  /** EIP-4844's BLOB_BASE_FEE_UPDATE_FRACTION of the L1 at a header. */
  blobUpdateFraction(header: L1BlockHeader): bigint;
}

/**
 * The public L1s' blob schedules: EIP-4844's BLOB_BASE_FEE_UPDATE_FRACTION from each fork's time
 * on (Cancun, Prague, then the blob-parameter-only forks after Osaka), as go-ethereum v1.17.10
 * carries them (`params/chainspecs/{mainnet,sepolia,hoodi}.json`). A header does not name its
 * fork, so the L1 chain id and the header's time pick the fraction. `until`: a later fork that may
 * change the schedule and is not carried here (Sepolia's Amsterdam): past it, refused.
 */
const l1BlobSchedules = new Map<number, { name: string; forks: readonly (readonly [number, bigint])[]; until?: number }>([
  [
    1,
    {
      name: 'Ethereum mainnet',
      forks: [
        [1710338135, 3_338_477n],
        [1746612311, 5_007_716n],
        [1765290071, 8_346_193n],
        [1767747671, 11_684_671n],
      ],
    },
  ],
  [
    11155111,
    {
      name: 'Sepolia',
      forks: [
        [1706655072, 3_338_477n],
        [1741159776, 5_007_716n],
        [1761017184, 8_346_193n],
        [1761607008, 11_684_671n],
      ],
      until: 1791294816,
    },
  ],
  [
    560048,
    {
      name: 'Hoodi',
      forks: [
        [0, 3_338_477n],
        [1742999832, 5_007_716n],
        [1762365720, 8_346_193n],
        [1762955544, 11_684_671n],
      ],
    },
  ],
]);
/** Another L1 (a devnet's, a test's) is taken to run Prague's fraction. */
const pragueUpdateFraction = 5_007_716n;

/**
 * The update fraction at an L1 header of the chain `l1ChainId`. Throws `DERIVE_UNSUPPORTED` past
 * a fork whose schedule is not carried.
 *
 * @example blobUpdateFraction(1, 1_767_747_671n, 24_000_000n) // 11_684_671n
 */
export function blobUpdateFraction(l1ChainId: number | undefined, timestamp: bigint, number: bigint): bigint {
  const schedule = l1ChainId === undefined ? undefined : l1BlobSchedules.get(l1ChainId);
  if (!schedule) return pragueUpdateFraction;
  if (schedule.until !== undefined && timestamp >= BigInt(schedule.until))
    throw new FlashlogError(
      'DERIVE_UNSUPPORTED',
      `L1 block ${number}: ${schedule.name}'s blob schedule after ${schedule.until} is not carried by flashlog, so the L1 blob base fee cannot be derived`,
    );
  const active = schedule.forks.filter(([time]) => timestamp >= BigInt(time)).at(-1);
  if (!active) throw new FlashlogError('DERIVE_UNSUPPORTED', `L1 block ${number}: ${schedule.name} had no blobs at ${timestamp}`);
  return active[1];
}

const cache = new WeakMap<RollupConfig, DerivationConfig>();

/**
 * The derivation fields of `rollup`, or `ROLLUP_CONFIG_INVALID` naming the first one missing.
 *
 * @example derivationConfigOf(rollup).batchInbox
 */
export function derivationConfigOf(rollup: RollupConfig): DerivationConfig {
  const known = cache.get(rollup);
  if (known) return known;
  const need = <T>(value: T | null | undefined, field: string): T => {
    if (value === null || value === undefined)
      throw new FlashlogError('ROLLUP_CONFIG_INVALID', `rollupConfig.${field} is needed to derive from L1 and is missing`);
    return value;
  };
  const genesis = need(rollup.genesis, 'genesis');
  const system = genesis.system_config;
  const l1ChainId = rollup.l1_chain_id ?? undefined;
  const config: DerivationConfig = {
    rollup,
    genesisL1Number: BigInt(genesis.l1.number),
    batchInbox: need(rollup.batch_inbox_address, 'batch_inbox_address') as Hex,
    depositContract: need(rollup.deposit_contract_address, 'deposit_contract_address') as Hex,
    systemConfigAddress: need(rollup.l1_system_config_address, 'l1_system_config_address') as Hex,
    seqWindowSize: BigInt(need(rollup.seq_window_size, 'seq_window_size')),
    maxSequencerDrift: BigInt(need(rollup.max_sequencer_drift, 'max_sequencer_drift')),
    channelTimeoutBedrock: rollup.channel_timeout ?? defaultChannelTimeoutBedrock,
    spanBatchChain: { l2GenesisTime: BigInt(genesis.l2_time), blockTime: BigInt(rollup.block_time), chainId: BigInt(rollup.l2_chain_id) },
    genesisSystemConfig: {
      batcher: system.batcherAddr as Hex,
      overhead: system.overhead as Hex,
      scalar: system.scalar as Hex,
      gasLimit: BigInt(system.gasLimit),
      eip1559Params: (system.eip1559Params ?? '0x0000000000000000') as Hex,
      operatorFeeParams: (system.operatorFeeParams ?? pad('0x', { size: 32 })) as Hex,
      minBaseFee: BigInt(system.minBaseFee ?? 0),
      daFootprintGasScalar: system.daFootprintGasScalar ?? 0,
    },
    blobUpdateFraction: (header) => blobUpdateFraction(l1ChainId, header.timestamp, header.number),
  };
  cache.set(rollup, config);
  return config;
}
