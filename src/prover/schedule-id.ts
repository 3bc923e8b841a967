import { encodeAbiParameters, keccak256, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import type { RollupConfig } from '../op/rollup-config.ts';

/**
 * The upgrade-schedule commitment a proof binds to (`scheduleId`, the last 32 bytes of the TEE
 * journal since base/contracts PR #359).
 *
 * L1's `ProtocolVersions` (base/contracts `src/L1/ProtocolVersions.sol` @4f7acda5) keeps one
 * activation timestamp per registered upgrade (0 = registered, not scheduled) and a hash chain
 * over them:
 *
 *   link[0]   = bytes32(0)
 *   link[i+1] = keccak256(abi.encode(link[i], uint256(i), uint256(timestamp_i)))
 *
 * `activatedScheduleId(t)` is the link just after the highest-id upgrade whose timestamp is
 * non-zero and ≤ t (link[0] when none is). `AggregateVerifier.initialize` pins
 * `activatedScheduleId(claimTimestamp)`, with claimTimestamp = L2 genesis time + (claim block −
 * genesis block) × block time (`AggregateVerifier.sol` @4f7acda5, lines 419-435).
 *
 * Base's enclave derives the same value from the rollup config rather than from L1 (base/base
 * `crates/proof/proof/src/schedule_id.rs`, `ScheduleId::pin`, read at the version the
 * `denim_native.rs` test @6cf00165 calls): the config's fork times in `contractUpgrades` order, a
 * fork time of 0 read as the L2 genesis time, then the chain above.
 */

/**
 * The upgrades `ProtocolVersions` registers, in registration order (ids 0, 1, 2, …): base/base
 * `BaseUpgrade::CONTRACT_VARIANTS` (`crates/common/genesis/src/chain/upgrade.rs`, index copy
 * carrying Denim). The order is the contract's; it only ever grows at the end.
 */
export const contractUpgrades = [
  'regolith',
  'canyon',
  'delta',
  'ecotone',
  'fjord',
  'granite',
  'holocene',
  'pectra_blob_schedule',
  'isthmus',
  'jovian',
  'azul',
  'beryl',
  'cobalt',
  'denim',
] as const;
export type ContractUpgrade = (typeof contractUpgrades)[number];

/** `keccak256(abi.encode(previous, index, timestamp))`: one link of the schedule hash chain. */
export function nextScheduleLink(previous: Hex, index: number, timestamp: bigint): Hex {
  return keccak256(
    encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }, { type: 'uint256' }], [previous, BigInt(index), timestamp]),
  );
}

export const zeroScheduleId: Hex = `0x${'00'.repeat(32)}`;

/**
 * `ProtocolVersions.activatedScheduleId(l2Timestamp)` over a registry's timestamps (index = id).
 *
 * @example activatedScheduleId([10n, 20n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 30n], 30n) // 0xc04583a1…
 */
export function activatedScheduleId(timestamps: readonly bigint[], l2Timestamp: bigint): Hex {
  let active = 0;
  for (let i = timestamps.length; i > 0; i--) {
    const t = timestamps[i - 1]!;
    if (t !== 0n && t <= l2Timestamp) {
      active = i;
      break;
    }
  }
  let link = zeroScheduleId;
  for (let i = 0; i < active; i++) link = nextScheduleLink(link, i, timestamps[i]!);
  return link;
}

/**
 * The registry a rollup config stands for: its fork times in `contractUpgrades` order, unset → 0,
 * a fork at 0 (active at genesis) → the L2 genesis time, as `ScheduleId::pin` normalises it. A
 * config without a genesis time (the devnet, synthetic test chains) puts such a fork at 1: active
 * from any block's timestamp on, as 0 would read "not scheduled" to the contract.
 */
export function upgradeScheduleOf(config: RollupConfig): bigint[] {
  const genesisTime = BigInt(config.genesis?.l2_time || 1);
  return contractUpgrades.map((upgrade) => {
    const time = config[`${upgrade}_time`];
    if (time === null || time === undefined) return 0n;
    return time === 0 ? genesisTime : BigInt(time);
  });
}

/**
 * The L2 timestamp `AggregateVerifier` gives a block: genesis time + (block − genesis block) ×
 * block time. Undefined for a config without `genesis` or a block before it (a synthetic chain
 * under a live chain's id).
 */
export function l2TimestampOfBlock(config: RollupConfig, blockNumber: number): bigint | undefined {
  if (!config.genesis || blockNumber < config.genesis.l2.number) return undefined;
  return BigInt(config.genesis.l2_time) + BigInt(blockNumber - config.genesis.l2.number) * BigInt(config.block_time);
}

/**
 * The scheduleId a proof of a range ending at `scheduleBlock` binds to on this chain.
 * `fallbackTimestamp` stands in for the block's L2 timestamp when the config has no genesis.
 *
 * @example scheduleIdOf(baseMainnetRollupConfig, 40_000_000)
 */
export function scheduleIdOf(config: RollupConfig, scheduleBlock: number, fallbackTimestamp?: bigint): Hex {
  const timestamp = l2TimestampOfBlock(config, scheduleBlock) ?? fallbackTimestamp;
  if (timestamp === undefined)
    throw new FlashlogError(
      'ROLLUP_CONFIG_INVALID',
      `chain ${config.l2_chain_id}: block ${scheduleBlock} has no L2 timestamp from the rollup config's genesis to pin the upgrade schedule at`,
    );
  return activatedScheduleId(upgradeScheduleOf(config), timestamp);
}
