import { FlashlogError } from '../errors.ts';
import { rulesAt, type RollupConfig } from '../op/rollup-config.ts';

/**
 * The L2 block schedule: the time of every L2 block from the rollup config and its number alone
 * (base/base `RollupConfig::l2_block_timestamp_millis`, `denim_activation_block_number`).
 *
 * | blocks | time |
 * | ------ | ---- |
 * | before Denim's activation block | `genesis.l2_time + (n − genesis.l2.number) × block_time` seconds |
 * | from it on | that block's legacy time, then 200 ms per block |
 *
 * Denim's activation block is the first whose legacy time is at or past `denim_time` (so it
 * starts on a whole second). After it about five blocks share a header `timestamp` (seconds) and
 * the millisecond part (0, 200, …, 800) travels in the block's BaseTime deposit. Derivation takes
 * every block's time from here once Denim is configured, not from its parent's time plus the
 * block time.
 */
export interface L2Schedule {
  /** The block's full time in milliseconds. */
  millis(number: bigint): bigint;
  /** The header `timestamp`: whole seconds. */
  seconds(number: bigint): bigint;
  /** The millisecond part, 0 to 999 (a multiple of 200 after Denim, 0 before). */
  millisPart(number: bigint): number;
  /** Denim's activation block, or undefined when the config has no Denim. */
  readonly denimBlock: bigint | undefined;
  /** Whether block `number` runs Denim's rules. */
  denim(number: bigint): boolean;
}

/** Denim's block interval (base/base `NATIVE_SUBSECOND_BLOCK_INTERVAL_MILLIS`). */
export const denimBlockMillis = 200n;

/**
 * The schedule of a rollup config with a `genesis`.
 *
 * @example l2ScheduleOf(rollup).seconds(1_234n)
 */
export function l2ScheduleOf(rollup: RollupConfig): L2Schedule {
  if (!rollup.genesis) throw new FlashlogError('ROLLUP_CONFIG_INVALID', 'rollupConfig.genesis: required for the L2 block schedule');
  const genesisNumber = BigInt(rollup.genesis.l2.number);
  const genesisTime = BigInt(rollup.genesis.l2_time);
  const blockTime = BigInt(rollup.block_time);
  const legacySeconds = (number: bigint) => genesisTime + (number > genesisNumber ? number - genesisNumber : 0n) * blockTime;
  const denimTime = rollup.denim_time;
  const denimBlock =
    denimTime === null || denimTime === undefined ? undefined : genesisNumber + ceilDiv(max0(BigInt(denimTime) - genesisTime), blockTime);
  const millis = (number: bigint) =>
    denimBlock === undefined || number < denimBlock
      ? legacySeconds(number) * 1000n
      : legacySeconds(denimBlock) * 1000n + (number - denimBlock) * denimBlockMillis;
  return {
    millis,
    seconds: (number) => millis(number) / 1000n,
    millisPart: (number) => Number(millis(number) % 1000n),
    denimBlock,
    denim: (number) => rulesAt(rollup, millis(number) / 1000n).active('denim'),
  };
}

/**
 * The header timestamp of the block after `parent`: from the schedule once Denim is active there,
 * else the parent's plus the block time (op-node's rule, identical on a chain that keeps its
 * schedule; tests build safe heads off it).
 *
 * @example nextTimestamp(rollup, { number: 9n, timestamp: 18n })
 */
export function nextTimestamp(rollup: RollupConfig, parent: { readonly number: bigint; readonly timestamp: bigint }): bigint {
  return isDenimBlock(rollup, parent.number + 1n)
    ? l2ScheduleOf(rollup).seconds(parent.number + 1n)
    : parent.timestamp + BigInt(rollup.block_time);
}

/**
 * Whether L2 block `number` runs Base's Denim (its time from the schedule); false for a config
 * without Denim or without a genesis.
 *
 * @example isDenimBlock(rollup, 41_000_000n)
 */
export function isDenimBlock(rollup: RollupConfig, number: bigint): boolean {
  return rollup.denim_time !== null && rollup.denim_time !== undefined && !!rollup.genesis && l2ScheduleOf(rollup).denim(number);
}

/** How far back a same-second batch's parent can be (base/base's `BatchValidator` looks five blocks back). */
export const sameSecondLookback = 5n;

/**
 * How many L2 blocks before the agreed one derivation can need, or undefined for every block back
 * to the first L1 block it reads: from Denim on only one second's (no span batch derives, and a
 * stale same-second batch is told by those).
 *
 * @example priorBlocksNeeded(baseRollup, agreedNumber) // 5
 */
export function priorBlocksNeeded(rollup: RollupConfig, agreedNumber: bigint): number | undefined {
  return isDenimBlock(rollup, agreedNumber + 1n) ? Number(sameSecondLookback) : undefined;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const max0 = (a: bigint) => (a > 0n ? a : 0n);
