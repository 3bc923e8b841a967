import { encodePacked, keccak256, type Address, type Hex } from 'viem';
import { knownRollupConfigs } from '../op/chains.ts';
import type { RollupConfig } from '../op/rollup-config.ts';

/**
 * `PerChainConfig::marshal_binary` (212 bytes, big-endian), from Base's nitro enclave (originally
 * op-enclave). The config hash is keccak256 of it, computed after `force_defaults()`, which only
 * touches fields that are not in the binary.
 *
 *   version u64 = 0 ‖ chain_id u256 ‖ genesis.l1.hash ‖ genesis.l2.hash ‖ genesis.l2_time u64
 *   ‖ batcher_addr(20) ‖ scalar bytes32 ‖ gas_limit u64 ‖ deposit_contract(20) ‖ l1_system_config(20)
 */
export interface PerChainConfig {
  readonly chainId: bigint | number;
  readonly l1GenesisHash: Hex;
  readonly l2GenesisHash: Hex;
  readonly l2GenesisTime: bigint | number;
  readonly batcher: Address;
  readonly scalar: Hex;
  readonly gasLimit: bigint | number;
  readonly depositContract: Address;
  readonly l1SystemConfig: Address;
}

export function marshalPerChainConfig(config: PerChainConfig): Hex {
  return encodePacked(
    ['uint64', 'uint256', 'bytes32', 'bytes32', 'uint64', 'address', 'uint256', 'uint64', 'address', 'address'],
    [
      0n,
      BigInt(config.chainId),
      config.l1GenesisHash,
      config.l2GenesisHash,
      BigInt(config.l2GenesisTime),
      config.batcher,
      BigInt(config.scalar),
      BigInt(config.gasLimit),
      config.depositContract,
      config.l1SystemConfig,
    ],
  );
}

export const perChainConfigHash = (config: PerChainConfig): Hex => keccak256(marshalPerChainConfig(config));

/**
 * Base's `CONFIG_HASHES` (spec era), by L2 chain id, as the golden vectors pin them. 1337 is the
 * local devnet (all-zero genesis). Other chains flashlog knows get theirs from their built-in
 * rollup config ({@link configHashOfChain}).
 */
export const configHashes: ReadonlyMap<number, Hex> = new Map<number, Hex>([
  [8453, '0x1607709d90d40904f790574404e2ad614eac858f6162faa0ec34c6bf5e5f3c57'], // Base mainnet
  [84532, '0x12e9c45f19f9817c6d4385fad29e7a70c355502cf0883e76a9a7e478a85d1360'], // Base Sepolia
  [11763072, '0x4600cdaa81262bf5f124bd9276f605264e2ded951e34923bc838e81c442f0fa4'], // Alpha devnet
  [763360, '0xab64b3118d2d030a3fd3fe3005239a2f332e48848bbedddca9e10df77ac7303e'], // Zeronet (spec era)
  [1337, '0x1bb15c380e7cf5cfd303807cc1dff6cd5275a6facc7628091d8b3a7ab6d631b1'], // local devnet
]);

/** Chain names the host uses to resolve `--l2-chain-id` at startup: every chain with a config hash by id. */
export const chainNames: ReadonlyMap<number, string> = new Map([
  [8453, 'base-mainnet'],
  [84532, 'base-sepolia'],
  [11763072, 'base-alpha'],
  [763360, 'base-zeronet'],
  [1337, 'devnet'],
  [10, 'op-mainnet'],
  [11155420, 'op-sepolia'],
  [130, 'unichain'],
  [1301, 'unichain-sepolia'],
]);

/**
 * The config hash of a chain the enclave is given by its rollup config (boot key 6) rather than
 * knowing it by id: `PerChainConfig` from the config's derivation fields, as op-enclave computes
 * it. Undefined when the config lacks them.
 *
 * @example configHashOfRollup(parseRollupConfig(json))
 */
export function configHashOfRollup(rollup: RollupConfig): Hex | undefined {
  const { genesis } = rollup;
  if (!genesis || !rollup.deposit_contract_address || !rollup.l1_system_config_address) return undefined;
  return perChainConfigHash({
    chainId: rollup.l2_chain_id,
    l1GenesisHash: genesis.l1.hash as Hex,
    l2GenesisHash: genesis.l2.hash as Hex,
    l2GenesisTime: genesis.l2_time,
    batcher: genesis.system_config.batcherAddr as Address,
    scalar: genesis.system_config.scalar as Hex,
    gasLimit: genesis.system_config.gasLimit,
    depositContract: rollup.deposit_contract_address as Address,
    l1SystemConfig: rollup.l1_system_config_address as Address,
  });
}

/**
 * The config hash the enclave signs with for a chain it knows by id: Base's table first (it wins
 * where both exist; for Base they agree), else the hash of flashlog's built-in rollup config
 * (OP Mainnet, OP Sepolia, Unichain, Unichain Sepolia). Undefined for any other chain: its hash
 * can only come from a rollup config the request carries.
 *
 * @example configHashOfChain(10) // PerChainConfig hash of OP Mainnet's registry genesis
 */
export function configHashOfChain(chainId: number): Hex | undefined {
  const fixed = configHashes.get(chainId);
  if (fixed) return fixed;
  const known = knownRollupConfigs.get(chainId);
  return known ? configHashOfRollup(known) : undefined;
}
