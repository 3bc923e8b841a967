import type { Hex } from 'viem';
import { devnetRollupConfig } from '../../src/op/chains.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';
import { scheduleIdOf } from '../../src/prover/schedule-id.ts';

/**
 * The scheduleId a proof of the devnet (chain 1337) binds to: its forks are all active from
 * genesis and its config has no genesis time, so any block's timestamp pins the same prefix.
 */
export const devnetScheduleId: Hex = scheduleIdOf(devnetRollupConfig, 1, BigInt(Math.floor(Date.now() / 1000)));

/** The scheduleId of a claim on a test chain whose rollup config carries a genesis. */
export const scheduleIdOfChain = (rollupConfig: unknown, claimBlock: number): Hex =>
  scheduleIdOf(parseRollupConfig(rollupConfig), claimBlock);
