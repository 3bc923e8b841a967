import { pad, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import type { RollupConfig } from '../evm/op/rollup-config.ts';
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
 * The L1s whose blob schedule flashlog does not carry: Ethereum mainnet, Sepolia and Hoodi moved
 * to blob-parameter-only forks after Osaka, each with its own update fraction, which a header does
 * not name. Other L1s (a devnet's, a test's) are taken to run Prague's fraction.
 */
const publicL1s = new Map<number, string>([
  [1, 'Ethereum mainnet'],
  [11155111, 'Sepolia'],
  [560048, 'Hoodi'],
]);
const pragueUpdateFraction = 5_007_716n;

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
    blobUpdateFraction(header) {
      const name = l1ChainId === undefined ? undefined : publicL1s.get(l1ChainId);
      if (name)
        throw new FlashlogError(
          'DERIVE_UNSUPPORTED',
          `L1 block ${header.number}: ${name}'s blob schedule (its blob-parameter-only forks) is not known to flashlog, so the L1 blob base fee cannot be derived`,
        );
      return pragueUpdateFraction;
    },
  };
  cache.set(rollup, config);
  return config;
}
