import { forksAtGenesis, type RollupConfig } from './rollup-config.ts';

/**
 * Rollup configs flashlog knows by chain id, so the enclave does not take a chain's rules from
 * whoever sends the request, and the prover host and `execute-block` need no `--rollup-config`
 * for them. Block execution reads the fork times and EIP-1559 parameters (from Holocene on the
 * parameters come from the parent's extraData; these are the pre-Holocene ones). The live chains
 * also carry op-node's derivation fields (genesis, SystemConfig at genesis, L1 addresses, the
 * sequencing window), from which the enclave's config hash is computed (prover/config-hash.ts).
 */

/** Regolith to Granite active from genesis (the devnet, and Unichain's chains, which launched after Granite's features). */
const fromGenesisToGranite = forksAtGenesis('granite');

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

/**
 * Lagoon: OP Sepolia, Unichain Sepolia (with Ink Sepolia, Soneium Minato) 2026-12-10 16:00:01 UTC;
 * OP Mainnet, Unichain (with Ink, Soneium) 2027-01-11 16:00:01 UTC (op-reth v2.10.0 and op-node
 * v1.21.0 release notes, 2026-11-25, as the chain notes of 2026-12 quote them;
 * UNCONFIRMED against a superchain-registry commit, which the stored copy @8336d2ae predates).
 */
const lagoonMainnet = 1799683201;
const lagoonSepolia = 1796918401;

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
 * What the registry's TOML leaves to the code that turns it into a rollup config: every chain's
 * `channel_timeout` is 300 L1 blocks before Granite (base/base @98a8db8d
 * `crates/consensus/genesis/src/chain/config.rs`, `ChainConfig::as_rollup_config`).
 */
const registryChannelTimeout = 300;

/**
 * The windows every live chain below shares: `seq_window_size` 3600 and `max_sequencer_drift` 600
 * (each chain's TOML, the same in all six), and the channel timeout above.
 */
const registryWindows = { seq_window_size: 3600, max_sequencer_drift: 600, channel_timeout: registryChannelTimeout } as const;

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
  lagoon_time: lagoonMainnet,
  chain_op_config: superchainEip1559,
  // Derivation: op.toml (`[genesis]`, `batch_inbox_addr`, `seq_window_size`, `max_sequencer_drift`,
  // `[addresses]` OptimismPortalProxy and SystemConfigProxy); l1_chain_id: `mainnet/superchain.toml` `[l1]`.
  genesis: {
    l1: { hash: '0x438335a20d98863a4c0c97999eb2481921ccd28553eac6f913af7c12aec04108', number: 17422590 },
    l2: { hash: '0xdbf6a80fef073de06add9b0d14026d6e5a86c85f6d102c36d3d8e9cf89c2afd3', number: 105235063 },
    l2_time: 1686068903,
    system_config: {
      batcherAddr: '0x6887246668a3b87F54DeB3b94Ba47a6f63F32985',
      overhead: '0x00000000000000000000000000000000000000000000000000000000000000bc',
      scalar: '0x00000000000000000000000000000000000000000000000000000000000a6fe0',
      gasLimit: 30000000,
    },
  },
  l1_chain_id: 1,
  batch_inbox_address: '0xFF00000000000000000000000000000000000010',
  ...registryWindows,
  deposit_contract_address: '0xbEb5Fc579115071764c7423A4f12eDde41f106Ed',
  l1_system_config_address: '0x229047fed2591dbec1eF1118d64F7aF3dB9EB290',
};

/** OP Sepolia: superchain-registry @8336d2ae `superchain/configs/sepolia/op.toml` (l1_chain_id: `sepolia/superchain.toml`). */
export const opSepoliaRollupConfig: RollupConfig = {
  l2_chain_id: 11155420,
  block_time: 2,
  ...superchainSepolia,
  karst_time: 1781712001,
  lagoon_time: lagoonSepolia,
  chain_op_config: superchainEip1559,
  genesis: {
    l1: { hash: '0x48f520cf4ddaf34c8336e6e490632ea3cf1e5e93b0b2bc6e917557e31845371b', number: 4071408 },
    l2: { hash: '0x102de6ffb001480cc9b8b548fd05c34cd4f46ae4aa91759393db90ea0409887d', number: 0 },
    l2_time: 1691802540,
    system_config: {
      batcherAddr: '0x8F23BB38F531600e5d8FDDaAEC41F13FaB46E98c',
      overhead: '0x00000000000000000000000000000000000000000000000000000000000000bc',
      scalar: '0x00000000000000000000000000000000000000000000000000000000000a6fe0',
      gasLimit: 30000000,
    },
  },
  l1_chain_id: 11155111,
  batch_inbox_address: '0xff00000000000000000000000000000011155420',
  ...registryWindows,
  deposit_contract_address: '0x16Fc5058F25648194471939df75CF27A2fdC48BC',
  l1_system_config_address: '0x034edD2A225f7f429A63E0f1D2084B9E0A93b538',
};

/**
 * Unichain: superchain-registry @8336d2ae `superchain/configs/mainnet/unichain.toml` (1 s blocks,
 * Canyon … Granite at genesis; derivation fields as for OP Mainnet).
 */
export const unichainRollupConfig: RollupConfig = {
  l2_chain_id: 130,
  block_time: 1,
  ...fromGenesisToGranite,
  holocene_time: 1736445601,
  isthmus_time: 1746806401,
  jovian_time: 1764691201,
  karst_time: 1783526401,
  lagoon_time: lagoonMainnet,
  chain_op_config: superchainEip1559,
  genesis: {
    l1: { hash: '0x8c799ed21bd97471f76ba48ea54b30f8169c7e4e4a22acfba06951b571e0f4b6', number: 21116363 },
    l2: { hash: '0x3425162ddf41a0a1f0106d67b71828c9a9577e6ddeb94e4f33d2cde1fdc3befe', number: 0 },
    l2_time: 1730748359,
    system_config: {
      batcherAddr: '0x2F60A5184c63ca94f82a27100643DbAbe4F3f7Fd',
      overhead: '0x0000000000000000000000000000000000000000000000000000000000000000',
      scalar: '0x010000000000000000000000000000000000000000000000000dbba0000007d0',
      gasLimit: 30000000,
    },
  },
  l1_chain_id: 1,
  batch_inbox_address: '0xFf00000000000000000000000000000000000130',
  ...registryWindows,
  deposit_contract_address: '0x0bd48f6B86a26D3a217d0Fa6FfE2B491B956A7a2',
  l1_system_config_address: '0xc407398d063f942feBbcC6F80a156b47F3f1BDA6',
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
  lagoon_time: lagoonSepolia,
  chain_op_config: superchainEip1559,
  genesis: {
    l1: { hash: '0x81719966c43c08d616a832331500633db68006f5e8c0b575a6faf1704ad350c0', number: 6728364 },
    l2: { hash: '0xb7fe0bc9f98ca03294ca0094ff9374cc3e64130b6ec85850d6e260191f48bfe7', number: 0 },
    l2_time: 1726852428,
    system_config: {
      batcherAddr: '0x4AB3387810eF500bfe05a49dc53A44C222cbab3e',
      overhead: '0x0000000000000000000000000000000000000000000000000000000000000000',
      scalar: '0x010000000000000000000000000000000000000000000000000dbba0000007d0',
      gasLimit: 30000000,
    },
  },
  l1_chain_id: 11155111,
  batch_inbox_address: '0xFf00000000000000000000000000000000001301',
  ...registryWindows,
  deposit_contract_address: '0x0d83dab629f0e0F9d36c0Cbc89B69a489f0751bD',
  l1_system_config_address: '0xaeE94b9aB7752D3F7704bDE212c0C6A0b701571D',
};

/**
 * Base mainnet. Regolith … Jovian and Azul, Beryl: base/base `crates/common/genesis/src/chain/upgrade.rs`
 * (`UpgradeConfig::BASE_MAINNET`, @002d00c1); EIP-1559 6 / 50 / 250: base/base
 * `crates/common/chains/src/config.rs` (@136b6f61). Cobalt 2026-09-30 18:00 UTC: base/base PRs
 * #5196/#5197 as Base reth v1.4.2's chain config quotes it (UNCONFIRMED: not read in a base/base
 * file). Denim 2026-11-05 18:00 UTC: docs.base.org Denim overview (UNCONFIRMED: not read in
 * base/base code). Derivation fields: the superchain registry's last `superchain/configs/mainnet/base.toml`
 * (@5b055be4, before Base left it in c00ce797), the same in base/base @98a8db8d
 * `crates/consensus/registry/configs/base-mainnet.toml` (which also gives l1_chain_id).
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
  genesis: {
    l1: { hash: '0x5c13d307623a926cd31415036c8b7fa14572f9dac64528e857a470511fc30771', number: 17481768 },
    l2: { hash: '0xf712aa9241cc24369b143cf6dce85f0902a9731e70d66818a3a5845b296c73dd', number: 0 },
    l2_time: 1686789347,
    system_config: {
      batcherAddr: '0x5050F69a9786F081509234F1a7F4684b5E5b76C9',
      overhead: '0x00000000000000000000000000000000000000000000000000000000000000bc',
      scalar: '0x00000000000000000000000000000000000000000000000000000000000a6fe0',
      gasLimit: 30000000,
    },
  },
  l1_chain_id: 1,
  batch_inbox_address: '0xFf00000000000000000000000000000000008453',
  ...registryWindows,
  deposit_contract_address: '0x49048044D57e1C92A77f79988d21Fa8fAF74E97e',
  l1_system_config_address: '0x73a79Fab69143498Ed3712e519A88a918e1f4072',
};

/**
 * Base Sepolia: the same sources (`UpgradeConfig::BASE_SEPOLIA`; EIP-1559 10 / 50 / 250). Cobalt
 * 2026-09-23 18:00 UTC (UNCONFIRMED as for mainnet), Denim 2026-10-21 18:00 UTC (docs.base.org,
 * UNCONFIRMED in code). Derivation fields: registry @5b055be4 `superchain/configs/sepolia/base.toml`,
 * the same in base/base @98a8db8d `crates/consensus/registry/configs/base-sepolia.toml`.
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
  genesis: {
    l1: { hash: '0xcac9a83291d4dec146d6f7f69ab2304f23f5be87b1789119a0c5b1e4482444ed', number: 4370868 },
    l2: { hash: '0x0dcc9e089e30b90ddfc55be9a37dd15bc551aeee999d2e2b51414c54eaf934e4', number: 0 },
    l2_time: 1695768288,
    system_config: {
      batcherAddr: '0x6CDEbe940BC0F26850285cacA097C11c33103E47',
      overhead: '0x0000000000000000000000000000000000000000000000000000000000000834',
      scalar: '0x00000000000000000000000000000000000000000000000000000000000f4240',
      gasLimit: 25000000,
    },
  },
  l1_chain_id: 11155111,
  batch_inbox_address: '0xfF00000000000000000000000000000000084532',
  ...registryWindows,
  deposit_contract_address: '0x49f53e41452C74589E85cA1677426Ba426459e85',
  l1_system_config_address: '0xf272670eb55e895584501d564AfEB048bEd26194',
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
