import { readFileSync } from 'node:fs';
import type { Config } from '../../config/settings.ts';
import { derivationConfigOf, type DerivationConfig } from '../../derive/derivation-config.ts';
import { priorBlocksNeeded } from '../../derive/schedule.ts';
import { ConfigError, errorMessage } from '../../errors.ts';
import { knownRollupConfigs } from '../../op/chains.ts';
import { parseRollupConfig, type RollupConfig } from '../../op/rollup-config.ts';
import type { EnclaveCheck } from '../boot-info.ts';
import { chainNames, configHashOfChain, configHashOfRollup } from '../config-hash.ts';
import type { DerivationSources } from './l1-witness.ts';

/**
 * The L2 chain a prover host serves, resolved at start: its id (--l2-chain-id, else the L2 node's
 * eth_chainId), its rollup config (--rollup-config, else flashlog's built-in one for the id), and
 * with --enclave-check derive the derivation fields. A chain the enclave has no config hash for,
 * or a check the chain's config cannot serve, stops the host with a ConfigError naming the setting.
 *
 *   --l2-chain-id | eth_chainId ---+
 *   --rollup-config (file) --------+--> hostChainOf --> { l2ChainId, rollup, rollupConfigJson, derivation }
 *   --enclave-check ---------------+
 */
export interface HostChain {
  readonly l2ChainId: number;
  /** The --rollup-config file as read: the host sends it to the enclave as boot local key 6. */
  readonly rollupConfigJson?: string;
  /** The rollup config given, else flashlog's built-in one for the chain; undefined for neither. */
  readonly rollup?: RollupConfig;
  /** --enclave-check derive: the rollup config's derivation fields. */
  readonly derivation?: DerivationConfig;
}

export interface HostChainInput {
  readonly chainId: number;
  /** The --rollup-config file: its path (for messages) and its text. */
  readonly rollupConfig?: { readonly path: string; readonly json: string } | undefined;
  readonly enclaveCheck: EnclaveCheck;
}

const rollupSetting = '--rollup-config (FLASHLOG_ROLLUP_CONFIG)';

/**
 * The chain a host serves, from settings already read (no I/O).
 * @example hostChainOf({ chainId: 10, enclaveCheck: 'reexecute' }).rollup?.l2_chain_id // 10
 */
export function hostChainOf({ chainId, rollupConfig, enclaveCheck }: HostChainInput): HostChain {
  let given: RollupConfig | undefined;
  if (rollupConfig) {
    try {
      given = parseRollupConfig(JSON.parse(rollupConfig.json), rollupConfig.path);
    } catch (error) {
      throw new ConfigError(`${rollupSetting}: ${errorMessage(error)}`);
    }
  }
  if (!configHashOfChain(chainId) && !(given && configHashOfRollup(given))) {
    throw new ConfigError(
      `--l2-chain-id (FLASHLOG_L2_CHAIN_ID): unknown chain ${chainId}, expected one of ${[...chainNames].map(([id, name]) => `${id} (${name})`).join(', ')}, or a --rollup-config with op-node's genesis and derivation fields`,
    );
  }
  const rollup = given ?? knownRollupConfigs.get(chainId);
  let derivation: DerivationConfig | undefined;
  if (enclaveCheck === 'derive') {
    // A chain flashlog knows carries its derivation fields built in (the enclave uses the same).
    if (!rollup) throw new ConfigError(`${rollupSetting}: --enclave-check derive needs the rollup config with its derivation fields`);
    try {
      derivation = derivationConfigOf(rollup);
    } catch (error) {
      throw new ConfigError(`${rollupSetting}: ${errorMessage(error)}`);
    }
  }
  if (!rollup && enclaveCheck === 'reexecute') {
    throw new ConfigError(
      `${rollupSetting}: required to re-execute chain ${chainId}, whose rollup config flashlog does not know (or --enclave-check headers)`,
    );
  }
  return {
    l2ChainId: chainId,
    ...(rollupConfig ? { rollupConfigJson: rollupConfig.json } : {}),
    ...(rollup ? { rollup } : {}),
    ...(derivation ? { derivation } : {}),
  };
}

/**
 * The chain a host serves, reading what the settings point at: the --rollup-config file, and the
 * L2 node's chain id (`readChainId`, eth_chainId) when --l2-chain-id is not given.
 * @example await resolveHostChain(config, () => l2('eth_chainId', []))
 */
export async function resolveHostChain(
  config: Pick<Config, 'l2Rpc' | 'l2ChainId' | 'rollupConfig' | 'enclaveCheck'>,
  readChainId: () => Promise<unknown>,
): Promise<HostChain> {
  let chainId = config.l2ChainId;
  if (chainId === undefined) {
    try {
      chainId = Number(BigInt((await readChainId()) as string));
    } catch (error) {
      throw new ConfigError(
        `--l2-rpc (FLASHLOG_L2_RPC): cannot read eth_chainId from ${config.l2Rpc}: ${errorMessage(error)}; set --l2-chain-id`,
      );
    }
  }
  let rollupConfig: HostChainInput['rollupConfig'];
  if (config.rollupConfig) {
    try {
      rollupConfig = { path: config.rollupConfig, json: readFileSync(config.rollupConfig, 'utf8') };
    } catch (error) {
      throw new ConfigError(`${rollupSetting}: ${errorMessage(error)}`);
    }
  }
  return hostChainOf({ chainId, rollupConfig, enclaveCheck: config.enclaveCheck });
}

/**
 * What the host collects of L1 for derivation: back from the L1 head to the agreed block's L1
 * origin less the channel timeout (Granite's 50 L1 blocks on a chain with Granite from genesis,
 * else the rollup config's longer pre-Granite timeout, which covers both).
 */
export function derivationSources(derivation: DerivationConfig, beaconUrl: string | undefined): DerivationSources {
  return {
    beaconUrl,
    batchInbox: derivation.batchInbox,
    channelTimeout: derivation.rollup.granite_time === 0 ? 50 : derivation.channelTimeoutBedrock,
    genesisL1Number: derivation.genesisL1Number,
    priorBlocksLimit: (agreedNumber) => priorBlocksNeeded(derivation.rollup, agreedNumber),
  };
}
