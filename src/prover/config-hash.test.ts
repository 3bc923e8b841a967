import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../test/helpers/shared.ts';
import { derivationConfigOf } from '../derive/derivation-config.ts';
import {
  baseMainnetRollupConfig,
  baseSepoliaRollupConfig,
  knownRollupConfigs,
  opMainnetRollupConfig,
  opSepoliaRollupConfig,
  unichainRollupConfig,
  unichainSepoliaRollupConfig,
} from '../op/chains.ts';
import { parseRollupConfig } from '../op/rollup-config.ts';
import { chainNames, configHashes, configHashOfChain, configHashOfRollup } from './config-hash.ts';

/**
 * The config hash of a chain flashlog knows by its rollup config. Base's enclave pins Base's own
 * hashes (the vectors' `chains`, asserted in base/base's server.rs): computing them from the
 * built-in Base configs' registry genesis holds both the PerChainConfig formula and the way the
 * derivation fields are transcribed, which the OP chains' hashes rely on.
 */
const upstream = (
  JSON.parse(readFileSync(sharedPath('fixtures/tee-prover/vectors.json'), 'utf8')) as {
    config_hash: { chains: Record<string, string> };
  }
).config_hash.chains;

const opChains = [opMainnetRollupConfig, opSepoliaRollupConfig, unichainRollupConfig, unichainSepoliaRollupConfig];

describe('config hashes of the built-in rollup configs', () => {
  it("Base mainnet's and Base Sepolia's computed hashes are the ones Base's enclave pins", () => {
    expect(configHashOfRollup(baseMainnetRollupConfig)).toBe(upstream['8453']);
    expect(configHashOfRollup(baseSepoliaRollupConfig)).toBe(upstream['84532']);
    // The table (which wins where both exist) agrees with the computed hash.
    expect(configHashes.get(8453)).toBe(configHashOfRollup(baseMainnetRollupConfig));
    expect(configHashes.get(84532)).toBe(configHashOfRollup(baseSepoliaRollupConfig));
  });

  it('OP Mainnet, OP Sepolia, Unichain and Unichain Sepolia have a config hash by id, from their built-in config', () => {
    for (const rollup of opChains) {
      const computed = configHashOfRollup(rollup);
      expect(computed, `chain ${rollup.l2_chain_id}`).toMatch(/^0x[0-9a-f]{64}$/);
      expect(configHashOfChain(rollup.l2_chain_id)).toBe(computed);
      expect(configHashes.has(rollup.l2_chain_id)).toBe(false);
    }
    const hashes = opChains.map((rollup) => configHashOfChain(rollup.l2_chain_id));
    expect(new Set(hashes).size).toBe(opChains.length);
    expect(hashes).not.toContain(configHashes.get(8453));
  });

  it('the table wins where both exist, and an unknown chain has none', () => {
    for (const [id, hash] of configHashes) expect(configHashOfChain(id)).toBe(hash);
    expect(configHashOfChain(424242)).toBeUndefined();
  });

  it('the host can name every chain that has a config hash by id', () => {
    const byId = [...new Set([...configHashes.keys(), ...knownRollupConfigs.keys()])].filter((id) => configHashOfChain(id));
    expect([...chainNames.keys()].sort((a, b) => a - b)).toEqual(byId.sort((a, b) => a - b));
    expect(opChains.map((rollup) => chainNames.get(rollup.l2_chain_id))).toEqual([
      'op-mainnet',
      'op-sepolia',
      'unichain',
      'unichain-sepolia',
    ]);
  });

  it("every live chain's built-in config parses and carries the fields derivation needs", () => {
    for (const rollup of [...opChains, baseMainnetRollupConfig, baseSepoliaRollupConfig]) {
      expect(parseRollupConfig(JSON.parse(JSON.stringify(rollup)), `chain ${rollup.l2_chain_id}`)).toEqual(rollup);
      const derivation = derivationConfigOf(rollup);
      expect(derivation.batchInbox.toLowerCase()).toBe(`0xff${'0'.repeat(38 - String(rollup.l2_chain_id).length)}${rollup.l2_chain_id}`);
      expect(derivation.channelTimeoutBedrock).toBe(300);
    }
  });
});
