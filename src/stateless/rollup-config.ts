import { z } from 'zod';
import { FlashlogError } from '../errors.ts';

/**
 * An OP Stack chain's rollup config, as kona and op-node serialise it (snake_case fork times,
 * `chain_op_config` or `base_fee_params` for EIP-1559). Only what block execution needs is read;
 * unknown fields are kept out of the way.
 */
const time = z.number().int().nonnegative().nullish();
const baseFeeParams = z.object({ max_change_denominator: z.number().int().positive(), elasticity_multiplier: z.number().int().positive() });
export const rollupConfigSchema = z.object({
  l2_chain_id: z.number().int().positive(),
  block_time: z.number().int().positive(),
  regolith_time: time,
  canyon_time: time,
  delta_time: time,
  ecotone_time: time,
  fjord_time: time,
  granite_time: time,
  holocene_time: time,
  isthmus_time: time,
  jovian_time: time,
  chain_op_config: z
    .object({
      eip1559Elasticity: z.number().int().positive(),
      eip1559Denominator: z.number().int().positive(),
      eip1559DenominatorCanyon: z.number().int().positive(),
    })
    .nullish(),
  base_fee_params: baseFeeParams.nullish(),
  canyon_base_fee_params: baseFeeParams.nullish(),
});
export type RollupConfig = z.infer<typeof rollupConfigSchema>;

/** The OP Stack forks block execution tells apart, oldest first. */
export const opForks = ['regolith', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus', 'jovian'] as const;
export type OpFork = (typeof opForks)[number];

/** The rules of one block: which forks are active at its timestamp, and the EIP-1559 parameters. */
export interface BlockRules {
  readonly chainId: number;
  readonly timestamp: bigint;
  active(fork: OpFork): boolean;
  /** The first block of `fork` (its timestamp is at or past the fork, its parent's was not). */
  activationBlock(fork: OpFork): boolean;
  /** The newest active fork, or 'bedrock'. */
  readonly fork: OpFork | 'bedrock';
  /** The Ethereum hardfork whose EVM the block runs: Isthmus → prague, Ecotone → cancun, Canyon → shanghai. */
  readonly evmHardfork: 'paris' | 'shanghai' | 'cancun' | 'prague';
  readonly denominator: bigint;
  readonly elasticity: bigint;
}

/**
 * Parses a rollup config, naming the field that does not fit.
 *
 * @example parseRollupConfig(fixture.rollupConfig)
 */
export function parseRollupConfig(raw: unknown, where = 'rollupConfig'): RollupConfig {
  const parsed = rollupConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FlashlogError('ROLLUP_CONFIG_INVALID', `${where}.${issue.path.join('.')}: ${issue.message}`);
  }
  if (!parsed.data.chain_op_config && !(parsed.data.base_fee_params && parsed.data.canyon_base_fee_params)) {
    throw new FlashlogError('ROLLUP_CONFIG_INVALID', `${where}: expected chain_op_config or base_fee_params and canyon_base_fee_params`);
  }
  return parsed.data;
}

/**
 * The rules at `timestamp`. A fork is active from its time on, and so is every fork before it
 * (kona and op-node cascade: a chain that set only holocene_time has Canyon too).
 */
export function rulesAt(config: RollupConfig, timestamp: bigint): BlockRules {
  const times = opForks.map((fork) => config[`${fork}_time`]);
  const activeAt = (index: number, at: bigint): boolean =>
    times.slice(index).some((forkTime) => forkTime !== null && forkTime !== undefined && BigInt(forkTime) <= at);
  const active = (fork: OpFork) => activeAt(opForks.indexOf(fork), timestamp);
  const newest = [...opForks].reverse().find(active) ?? 'bedrock';
  const canyon = active('canyon');
  const op = config.chain_op_config;
  const denominator = op
    ? canyon
      ? op.eip1559DenominatorCanyon
      : op.eip1559Denominator
    : (canyon ? config.canyon_base_fee_params! : config.base_fee_params!).max_change_denominator;
  const elasticity = op ? op.eip1559Elasticity : (canyon ? config.canyon_base_fee_params! : config.base_fee_params!).elasticity_multiplier;
  return {
    chainId: config.l2_chain_id,
    timestamp,
    active,
    activationBlock: (fork) =>
      active(fork) && (timestamp < BigInt(config.block_time) || !activeAt(opForks.indexOf(fork), timestamp - BigInt(config.block_time))),
    fork: newest,
    evmHardfork: active('isthmus') ? 'prague' : active('ecotone') ? 'cancun' : canyon ? 'shanghai' : 'paris',
    denominator: BigInt(denominator),
    elasticity: BigInt(elasticity),
  };
}
