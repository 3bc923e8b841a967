import { z } from 'zod';
import { FlashlogError } from '../errors.ts';

/**
 * An OP Stack chain's rollup config, as kona and op-node serialise it (snake_case fork times,
 * `chain_op_config` or `base_fee_params` for EIP-1559). Only what block execution needs is read;
 * unknown fields are kept out of the way.
 */
const time = z.number().int().nonnegative().nullish();
const baseFeeParams = z.object({ max_change_denominator: z.number().int().positive(), elasticity_multiplier: z.number().int().positive() });
const hex = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'expected 0x-prefixed hex bytes');
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 20-byte 0x address');
const hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'expected a 32-byte 0x hash');
const blockId = z.object({ hash, number: z.number().int().nonnegative() });
/** op-node's `genesis`: the L1 and L2 blocks the chain starts from, and the SystemConfig at L2 genesis. */
const genesisSchema = z.object({
  l1: blockId,
  l2: blockId,
  l2_time: z.number().int().nonnegative(),
  system_config: z.object({
    batcherAddr: address,
    overhead: hash,
    scalar: hash,
    gasLimit: z.number().int().positive(),
    eip1559Params: z
      .string()
      .regex(/^0x[0-9a-fA-F]{16}$/)
      .nullish(),
    operatorFeeParams: hash.nullish(),
    minBaseFee: z.number().int().nonnegative().nullish(),
    daFootprintGasScalar: z.number().int().nonnegative().nullish(),
  }),
});
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
  /** Base Sepolia's contract-only fork (base/base `BaseUpgrade::PectraBlobSchedule`): no execution rule, only a ProtocolVersions entry. */
  pectra_blob_schedule_time: time,
  isthmus_time: time,
  jovian_time: time,
  /** OP "Upgrade 19" (OP Mainnet, Unichain and the superchain's chains). */
  karst_time: time,
  /**
   * OP's Lagoon (formerly "Interop"): the post-exec transaction (0x7D) and Sequencer-Defined Metering
   * (specs `protocol/lagoon/post-exec.md`, `sdm.md`), interop between the chains of a dependency set.
   */
  lagoon_time: time,
  /** Base's own forks after Jovian (Base does not adopt Karst). */
  azul_time: time,
  beryl_time: time,
  cobalt_time: time,
  denim_time: time,
  /**
   * flashlog's own field: the runtime code the Denim activation installs at the BaseTime
   * implementation address, for a chain (a devnet) whose code flashlog does not carry.
   */
  base_time_implementation_code: hex.nullish(),
  chain_op_config: z
    .object({
      eip1559Elasticity: z.number().int().positive(),
      eip1559Denominator: z.number().int().positive(),
      eip1559DenominatorCanyon: z.number().int().positive(),
    })
    .nullish(),
  base_fee_params: baseFeeParams.nullish(),
  canyon_base_fee_params: baseFeeParams.nullish(),
  // Derivation (op-node's rollup.json): optional for execution, required to derive from L1.
  genesis: genesisSchema.nullish(),
  seq_window_size: z.number().int().positive().nullish(),
  max_sequencer_drift: z.number().int().nonnegative().nullish(),
  channel_timeout: z.number().int().positive().nullish(),
  l1_chain_id: z.number().int().positive().nullish(),
  batch_inbox_address: address.nullish(),
  deposit_contract_address: address.nullish(),
  l1_system_config_address: address.nullish(),
});
export type RollupConfig = z.infer<typeof rollupConfigSchema>;

/** The forks every OP Stack chain shares, oldest first, up to Jovian. */
const commonForks = ['regolith', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus', 'jovian'] as const;
export type SharedFork = (typeof commonForks)[number];

/**
 * A rollup config's fork times with every fork from Regolith through `through` active at genesis
 * (time 0): devnets, test chains, chains that launched past those forks.
 *
 * @example parseRollupConfig({ l2_chain_id: 901, block_time: 2, ...forksAtGenesis('isthmus'), chain_op_config })
 */
export function forksAtGenesis(through: SharedFork): Partial<Record<`${SharedFork}_time`, number>> {
  return Object.fromEntries(commonForks.slice(0, commonForks.indexOf(through) + 1).map((fork) => [`${fork}_time`, 0]));
}
/** The OP (superchain) ladder: Karst, then Lagoon, after Jovian. */
export const opForks = [...commonForks, 'karst', 'lagoon'] as const;
/** Base's ladder (base/base `BaseUpgrade::EXECUTION_VARIANTS` + Denim): Azul, Beryl, Cobalt, Denim after Jovian. */
export const baseForks = [...commonForks, 'azul', 'beryl', 'cobalt', 'denim'] as const;
export type OpFork = (typeof opForks)[number] | (typeof baseForks)[number];
const baseOnly = ['azul', 'beryl', 'cobalt', 'denim'] as const;

/** The ladder a config's fork times name: Base's when it sets a Base fork, else OP's. */
export function ladderOf(config: RollupConfig): readonly OpFork[] {
  return baseOnly.some((fork) => isSet(config[`${fork}_time`])) ? baseForks : opForks;
}
const isSet = (value: number | null | undefined): value is number => value !== null && value !== undefined;

/** The rules of one block: which forks are active at its timestamp, and the EIP-1559 parameters. */
export interface BlockRules {
  readonly chainId: number;
  readonly timestamp: bigint;
  active(fork: OpFork): boolean;
  /** The first block of `fork` (its timestamp is at or past the fork, its parent's was not). */
  activationBlock(fork: OpFork): boolean;
  /** The newest active fork, or 'bedrock'. */
  readonly fork: OpFork | 'bedrock';
  /**
   * The Ethereum hardfork whose EVM the block runs, by its newest active fork (`fork`): Karst (and
   * Lagoon after it; Lagoon's specs name no EVM change, UNCONFIRMED against a Lagoon client) or
   * Azul and the Base forks after it → osaka, Isthmus → prague, Ecotone → cancun, Canyon → shanghai.
   */
  readonly evmHardfork: 'paris' | 'shanghai' | 'cancun' | 'prague' | 'osaka';
  readonly denominator: bigint;
  readonly elasticity: bigint;
}

/**
 * Parses a rollup config, naming the field that does not fit.
 *
 * @example parseRollupConfig(fixture.rollupConfig)
 */
export function parseRollupConfig(raw: unknown, where = 'rollupConfig'): RollupConfig {
  const parsed = rollupConfigSchema.safeParse(flattenBaseUpgrades(raw));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FlashlogError('ROLLUP_CONFIG_INVALID', `${where}.${issue.path.join('.')}: ${issue.message}`);
  }
  if (!parsed.data.chain_op_config && !(parsed.data.base_fee_params && parsed.data.canyon_base_fee_params)) {
    throw new FlashlogError('ROLLUP_CONFIG_INVALID', `${where}: expected chain_op_config or base_fee_params and canyon_base_fee_params`);
  }
  const base = baseOnly.find((fork) => isSet(parsed.data[`${fork}_time`]));
  for (const fork of ['karst', 'lagoon'] as const)
    if (base && isSet(parsed.data[`${fork}_time`]))
      throw new FlashlogError(
        'ROLLUP_CONFIG_INVALID',
        `${where}.${fork}_time: a chain on Base's ladder (${base}_time) has no ${fork === 'karst' ? 'Karst' : 'Lagoon'}`,
      );
  return parsed.data;
}

/**
 * base/base writes its own forks in a nested `base` object (`crates/common/genesis/src/chain/upgrade.rs`,
 * `BaseUpgradeConfig`: `azul` alias `v1`, `beryl` alias `v2`, `cobalt` alias `v3`, `denim`); read
 * them as the flat `<fork>_time` fields, so such a config is not silently taken for an OP chain.
 */
function flattenBaseUpgrades(raw: unknown): unknown {
  if (typeof raw !== 'object' || raw === null || !('base' in raw)) return raw;
  const { base, ...rest } = raw as { base: unknown } & Record<string, unknown>;
  if (typeof base !== 'object' || base === null) return raw;
  const nested = base as Record<string, unknown>;
  const pick = (...names: string[]) => names.map((name) => nested[name]).find((value) => value !== undefined && value !== null);
  const flat: Record<string, unknown> = { ...rest };
  for (const [fork, alias] of [
    ['azul', 'v1'],
    ['beryl', 'v2'],
    ['cobalt', 'v3'],
    ['denim', undefined],
  ] as const) {
    const value = alias ? pick(fork, alias) : pick(fork);
    if (value !== undefined) flat[`${fork}_time`] ??= value;
  }
  return flat;
}

/**
 * The rules at `timestamp`. A fork is active from its time on. On OP's ladder so is every fork
 * before it (kona and op-node cascade: a chain that set only holocene_time has Canyon too). On
 * Base's ladder the OP forks cascade up to Jovian only, and Azul, Beryl, Cobalt and Denim are each
 * active from their own time alone: a Base chain that set only denim_time has no Regolith, Canyon
 * or Azul in its config (base/base `crates/common/genesis/src/rollup.rs` @01d66da3: `is_jovian_active`
 * and the Base forks imply nothing before them; `base_common_chains::Upgrades` for `RollupConfig`
 * gives Jovian-and-later `Never` when unset). What such a block runs is the newest active fork,
 * `fork` and `evmHardfork` (base/base `BaseUpgrade::from_timestamp`, newest first, and
 * `into_eth_spec`): its EVM has every rule up to Denim's while the config-level rules (the header's
 * fields, the deposit receipts' nonce, the L1-info form) stay those of the forks it set. A fork of
 * the other ladder is never active. `parentTimestamp` tells the activation block apart where blocks
 * can share a second (Denim); without it the parent is taken `block_time` earlier.
 */
export function rulesAt(config: RollupConfig, timestamp: bigint, parentTimestamp?: bigint): BlockRules {
  const ladder = ladderOf(config);
  const times = ladder.map((fork) => config[`${fork}_time`]);
  // The forks whose times can make fork `index` active: itself and the later ones it cascades from.
  const cascadeEnd = (index: number) =>
    ladder === baseForks ? (index < commonForks.length ? commonForks.length : index + 1) : ladder.length;
  const activeAt = (index: number, at: bigint): boolean =>
    index >= 0 && times.slice(index, cascadeEnd(index)).some((forkTime) => isSet(forkTime) && BigInt(forkTime) <= at);
  const active = (fork: OpFork) => activeAt(ladder.indexOf(fork), timestamp);
  const newest = [...ladder].reverse().find(active) ?? 'bedrock';
  const canyon = active('canyon');
  const op = config.chain_op_config;
  const denominator = op
    ? canyon
      ? op.eip1559DenominatorCanyon
      : op.eip1559Denominator
    : (canyon ? config.canyon_base_fee_params! : config.base_fee_params!).max_change_denominator;
  const elasticity = op ? op.eip1559Elasticity : (canyon ? config.canyon_base_fee_params! : config.base_fee_params!).elasticity_multiplier;
  const parent = parentTimestamp ?? timestamp - BigInt(config.block_time);
  return {
    chainId: config.l2_chain_id,
    timestamp,
    active,
    activationBlock: (fork) => active(fork) && (parent < 0n || !activeAt(ladder.indexOf(fork), parent)),
    fork: newest,
    evmHardfork: evmHardforkOf(newest),
    denominator: BigInt(denominator),
    elasticity: BigInt(elasticity),
  };
}

/** The Ethereum hardfork a fork's EVM runs (base/base `BaseUpgrade::into_eth_spec`; op-revm's `OpSpecId`). */
function evmHardforkOf(fork: OpFork | 'bedrock'): BlockRules['evmHardfork'] {
  switch (fork) {
    case 'bedrock':
    case 'regolith':
      return 'paris';
    case 'canyon':
    case 'delta':
      return 'shanghai';
    case 'ecotone':
    case 'fjord':
    case 'granite':
    case 'holocene':
      return 'cancun';
    case 'isthmus':
    case 'jovian':
      return 'prague';
    default:
      return 'osaka';
  }
}
