import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../errors.ts';
import { knownRollupConfigs } from '../../op/chains.ts';
import { tempDir } from '../../../test/helpers/context.ts';
import { configHashOfRollup } from '../config-hash.ts';
import { derivationSources, hostChainOf, resolveHostChain } from './host-chain.ts';

/**
 * The chain a prover host serves, resolved at start from its settings: flashlog's built-in chains
 * (OP Sepolia's registry rollup config), Base's chains known by config hash only (Alpha devnet),
 * and a chain known only by the rollup config it is given.
 */
const opSepolia = knownRollupConfigs.get(11155420)!;
/** OP Sepolia's rollup config under another chain id: a chain flashlog knows only from the file. */
const customJson = JSON.stringify({ ...opSepolia, l2_chain_id: 424242 });
const dir = tempDir();
afterAll(() => dir.remove());

const refusal = (work: () => unknown): string => {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe("the prover host's chain", () => {
  it('a chain flashlog knows: its built-in rollup config, and its derivation fields for --enclave-check derive', () => {
    const chain = hostChainOf({ chainId: 11155420, enclaveCheck: 'derive' });
    expect(chain.l2ChainId).toBe(11155420);
    expect(chain.rollup).toBe(opSepolia);
    expect(chain.rollupConfigJson).toBeUndefined();
    expect(chain.derivation?.batchInbox.toLowerCase()).toBe(opSepolia.batch_inbox_address!.toLowerCase());
    const sources = derivationSources(chain.derivation!, 'http://127.0.0.1:5052');
    expect(sources.beaconUrl).toBe('http://127.0.0.1:5052');
    // Granite came after genesis on OP Sepolia: the rollup config's pre-Granite channel timeout, which covers both.
    expect(sources.channelTimeout).toBe(300);
    expect(sources.genesisL1Number).toBe(4071408n);
  });

  it('a chain known only by its config hash serves headers checks, and names the missing rollup config for the others', () => {
    expect(hostChainOf({ chainId: 11763072, enclaveCheck: 'headers' })).toEqual({ l2ChainId: 11763072 });
    expect(refusal(() => hostChainOf({ chainId: 11763072, enclaveCheck: 'reexecute' }))).toBe(
      '--rollup-config (FLASHLOG_ROLLUP_CONFIG): required to re-execute chain 11763072, whose rollup config flashlog does not know (or --enclave-check headers)',
    );
    expect(refusal(() => hostChainOf({ chainId: 11763072, enclaveCheck: 'derive' }))).toBe(
      '--rollup-config (FLASHLOG_ROLLUP_CONFIG): --enclave-check derive needs the rollup config with its derivation fields',
    );
  });

  it('a chain known only from --rollup-config: accepted with its text (boot key 6); without it, refused with the known chains listed', () => {
    const chain = hostChainOf({ chainId: 424242, rollupConfig: { path: 'custom.json', json: customJson }, enclaveCheck: 'reexecute' });
    expect(chain.rollupConfigJson).toBe(customJson);
    expect(chain.rollup?.l2_chain_id).toBe(424242);
    expect(configHashOfRollup(chain.rollup!)).toMatch(/^0x[0-9a-f]{64}$/);
    const message = refusal(() => hostChainOf({ chainId: 424242, enclaveCheck: 'headers' }));
    expect(message).toMatch(/^--l2-chain-id \(FLASHLOG_L2_CHAIN_ID\): unknown chain 424242, expected one of 8453 \(base-mainnet\), /);
    expect(message).toContain('11155420 (op-sepolia)');
  });

  it('a rollup config that is not one is refused naming the setting', () => {
    expect(refusal(() => hostChainOf({ chainId: 10, rollupConfig: { path: 'x.json', json: '{' }, enclaveCheck: 'reexecute' }))).toMatch(
      /^--rollup-config \(FLASHLOG_ROLLUP_CONFIG\): /,
    );
  });
});

describe("resolving the host's chain from its settings", () => {
  const settings = { l2Rpc: 'http://127.0.0.1:9545', l2ChainId: undefined, rollupConfig: undefined, enclaveCheck: 'reexecute' } as const;

  it("asks the L2 node for its chain id when --l2-chain-id is not given, and reads --rollup-config's file", async () => {
    expect((await resolveHostChain(settings, async () => '0xaa37dc')).l2ChainId).toBe(11155420);
    const path = join(dir.path, 'rollup.json');
    writeFileSync(path, customJson);
    const chain = await resolveHostChain({ ...settings, l2ChainId: 424242, rollupConfig: path }, async () => {
      throw new Error('not asked: the chain id is given');
    });
    expect(chain).toMatchObject({ l2ChainId: 424242, rollupConfigJson: customJson });
  });

  it('an L2 node that cannot say its chain id, or a file that cannot be read, stops the host naming the setting', async () => {
    await expect(
      resolveHostChain(settings, async () => {
        throw new Error('connect ECONNREFUSED');
      }),
    ).rejects.toThrow(
      '--l2-rpc (FLASHLOG_L2_RPC): cannot read eth_chainId from http://127.0.0.1:9545: connect ECONNREFUSED; set --l2-chain-id',
    );
    await expect(
      resolveHostChain({ ...settings, l2ChainId: 10, rollupConfig: join(dir.path, 'missing.json') }, async () => '0xa'),
    ).rejects.toThrow(/^--rollup-config \(FLASHLOG_ROLLUP_CONFIG\): ENOENT/);
  });
});
