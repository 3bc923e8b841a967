import type { RollupConfig } from './rollup-config.ts';

/**
 * Rollup configs flashlog knows by chain id, so the enclave does not take a chain's rules from
 * whoever sends the request, and the prover host and `execute-block` need no `--rollup-config`
 * for them. Only what block execution reads is kept: fork times and EIP-1559 parameters (from
 * Holocene on the parameters come from the parent's extraData; these are the pre-Holocene ones).
 */

/** Regolith to Granite active from genesis (the devnet, and Unichain's chains, which launched after Granite's features). */
const fromGenesisToGranite = {
  regolith_time: 0,
  canyon_time: 0,
  delta_time: 0,
  ecotone_time: 0,
  fjord_time: 0,
  granite_time: 0,
} as const;

/**
 * The devnet (EDR's OP chain type at Isthmus from genesis, EIP-1559 50/250 and elasticity 6, as
 * EDR builds its headers). `flashlog devnet --denim` runs the same chain id on the same EDR
 * chain: its blocks are Isthmus blocks with a BaseTime-shaped tx[1], not Denim blocks.
 */
export const devnetRollupConfig: RollupConfig = {
  l2_chain_id: 1337,
  block_time: 1,
  ...fromGenesisToGranite,
  holocene_time: 0,
  isthmus_time: 0,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
};

/** EIP-1559 parameters of the superchain registry's `[optimism]` table (the same for the four OP chains below, and Base mainnet). */
const superchainEip1559 = { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 };

/**
 * The superchain's shared schedule, Regolith to Jovian, which OP Mainnet and Base mainnet (and
 * their Sepolia chains) both followed: the registry's `superchain.toml` hardfork times, the same
 * in base/base's `UpgradeConfig` (sources below, per chain).
 */
const superchainMainnet = {
  regolith_time: 0,
  canyon_time: 1704992401,
  delta_time: 1708560000,
  ecotone_time: 1710374401,
  fjord_time: 1720627201,
  granite_time: 1726070401,
  holocene_time: 1736445601,
  isthmus_time: 1746806401,
  jovian_time: 1764691201,
} as const;
const superchainSepolia = {
  regolith_time: 0,
  canyon_time: 1699981200,
  delta_time: 1703203200,
  ecotone_time: 1708534800,
  fjord_time: 1716998400,
  granite_time: 1723478400,
  holocene_time: 1732633200,
  isthmus_time: 1744905600,
  jovian_time: 1763568001,
} as const;

/**
 * OP Mainnet: ethereum-optimism/superchain-registry @8336d2ae `superchain/configs/mainnet/op.toml`
 * (`[hardforks]`, `[optimism]`). Regolith is not listed there: the registry activates it at
 * genesis for every chain (`ops/internal/manage/validation.go`, `RegolithTime: &genesisActivation`).
 */
export const opMainnetRollupConfig: RollupConfig = {
  l2_chain_id: 10,
  block_time: 2,
  ...superchainMainnet,
  karst_time: 1783526401,
  chain_op_config: superchainEip1559,
};

/** OP Sepolia: superchain-registry @8336d2ae `superchain/configs/sepolia/op.toml`. */
export const opSepoliaRollupConfig: RollupConfig = {
  l2_chain_id: 11155420,
  block_time: 2,
  ...superchainSepolia,
  karst_time: 1781712001,
  chain_op_config: superchainEip1559,
};

/** Unichain: superchain-registry @8336d2ae `superchain/configs/mainnet/unichain.toml` (1 s blocks, Canyon … Granite at genesis). */
export const unichainRollupConfig: RollupConfig = {
  l2_chain_id: 130,
  block_time: 1,
  ...fromGenesisToGranite,
  holocene_time: 1736445601,
  isthmus_time: 1746806401,
  jovian_time: 1764691201,
  karst_time: 1783526401,
  chain_op_config: superchainEip1559,
};

/** Unichain Sepolia: superchain-registry @8336d2ae `superchain/configs/sepolia/unichain.toml`. */
export const unichainSepoliaRollupConfig: RollupConfig = {
  l2_chain_id: 1301,
  block_time: 1,
  ...fromGenesisToGranite,
  holocene_time: 1734559200,
  isthmus_time: 1744905600,
  jovian_time: 1763568001,
  karst_time: 1781712001,
  chain_op_config: superchainEip1559,
};

/**
 * Base mainnet. Regolith … Jovian and Azul, Beryl: base/base `crates/common/genesis/src/chain/upgrade.rs`
 * (`UpgradeConfig::BASE_MAINNET`, @002d00c1); EIP-1559 6 / 50 / 250: base/base
 * `crates/common/chains/src/config.rs` (@136b6f61). Cobalt 2026-09-30 18:00 UTC: base/base PRs
 * #5196/#5197 as Base reth v1.4.2's chain config quotes it (UNCONFIRMED: not read in a base/base
 * file). Denim 2026-11-05 18:00 UTC: docs.base.org Denim overview (UNCONFIRMED: not read in
 * base/base code).
 */
export const baseMainnetRollupConfig: RollupConfig = {
  l2_chain_id: 8453,
  block_time: 2,
  ...superchainMainnet,
  azul_time: 1779991200,
  beryl_time: 1782410400,
  cobalt_time: 1790791200,
  denim_time: 1793901600,
  chain_op_config: superchainEip1559,
};

/**
 * Base Sepolia: the same sources (`UpgradeConfig::BASE_SEPOLIA`; EIP-1559 10 / 50 / 250). Cobalt
 * 2026-09-23 18:00 UTC (UNCONFIRMED as for mainnet), Denim 2026-10-21 18:00 UTC (docs.base.org,
 * UNCONFIRMED in code).
 */
export const baseSepoliaRollupConfig: RollupConfig = {
  l2_chain_id: 84532,
  block_time: 2,
  ...superchainSepolia,
  azul_time: 1776708000,
  beryl_time: 1781805600,
  cobalt_time: 1790186400,
  denim_time: 1792605600,
  chain_op_config: { eip1559Elasticity: 10, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
};

export const knownRollupConfigs: ReadonlyMap<number, RollupConfig> = new Map(
  [
    devnetRollupConfig,
    opMainnetRollupConfig,
    opSepoliaRollupConfig,
    unichainRollupConfig,
    unichainSepoliaRollupConfig,
    baseMainnetRollupConfig,
    baseSepoliaRollupConfig,
  ].map((config) => [config.l2_chain_id, config]),
);
