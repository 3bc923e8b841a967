import { createAddressFromString } from '@ethereumjs/util';
import { hexToBytes, keccak256, toHex, toRlp } from 'viem';
import { describe, expect, it } from 'vitest';
import { blockExtraData, nextBaseFee } from './base-fee.ts';
import type { BlockHeader } from './header.ts';
import { fastLzSize } from './l1-cost.ts';
import { parseRollupConfig, rulesAt } from './rollup-config.ts';
import { createWitnessState, emptyTrieRoot } from '../evm/op/witness-state.ts';

const config = parseRollupConfig({
  l2_chain_id: 10,
  block_time: 2,
  canyon_time: 100,
  ecotone_time: 200,
  holocene_time: 300,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});
const parent = (over: Partial<BlockHeader>): BlockHeader => ({
  parentHash: emptyTrieRoot,
  sha3Uncles: emptyTrieRoot,
  miner: '0x4200000000000000000000000000000000000011',
  stateRoot: emptyTrieRoot,
  transactionsRoot: emptyTrieRoot,
  receiptsRoot: emptyTrieRoot,
  logsBloom: `0x${'00'.repeat(256)}`,
  difficulty: 0n,
  number: 1n,
  gasLimit: 30_000_000n,
  gasUsed: 5_000_000n,
  timestamp: 50n,
  extraData: '0x',
  mixHash: emptyTrieRoot,
  nonce: '0x0000000000000000',
  baseFeePerGas: 1_000_000n,
  ...over,
});

describe('OP Stack block rules', () => {
  it('forks cascade: a later fork set means the earlier ones are active', () => {
    const rules = rulesAt(config, 300n);
    expect(['regolith', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene'].map((fork) => rules.active(fork as never))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(rules.active('isthmus')).toBe(false);
    expect(rulesAt(config, 99n).fork).toBe('bedrock'); // no regolith_time: nothing before Canyon
    expect(rulesAt(config, 200n).activationBlock('ecotone')).toBe(true);
    expect(rulesAt(config, 202n).activationBlock('ecotone')).toBe(false);
    expect([rulesAt(config, 99n).evmHardfork, rulesAt(config, 100n).evmHardfork, rulesAt(config, 200n).evmHardfork]).toEqual([
      'paris',
      'shanghai',
      'cancun',
    ]);
  });

  it('base fee: Canyon denominator, then Holocene parameters from the parent extraData', () => {
    // Parent gas used above the 5M target (30M / 6): +1M·(1M/5M)/denominator.
    const above = { gasUsed: 6_000_000n };
    expect(nextBaseFee(parent({ ...above, timestamp: 50n }), config, rulesAt(config, 52n))).toBe(1_000_000n + 1_000_000n / 5n / 50n);
    expect(nextBaseFee(parent({ ...above, timestamp: 150n }), config, rulesAt(config, 152n))).toBe(1_000_000n + 1_000_000n / 5n / 250n);
    // Holocene parent with denominator 8, elasticity 2 (target 15M).
    const holocene = parent({ timestamp: 300n, gasUsed: 20_000_000n, extraData: '0x000000000800000002' });
    expect(nextBaseFee(holocene, config, rulesAt(config, 302n))).toBe(1_000_000n + (1_000_000n * 5_000_000n) / 15_000_000n / 8n);
    expect(() => nextBaseFee(parent({ timestamp: 300n, extraData: '0x' }), config, rulesAt(config, 302n))).toThrow(
      'Holocene extraData must be 9 bytes',
    );
  });

  it('extraData: empty before Holocene, 0x00 ‖ eip1559Params from it on, the config values for zero params', () => {
    expect(blockExtraData(rulesAt(config, 250n), '0x0000000800000002')).toBe('0x');
    expect(blockExtraData(rulesAt(config, 300n), '0x0000000800000002')).toBe('0x000000000800000002');
    expect(blockExtraData(rulesAt(config, 300n), '0x0000000000000000')).toBe('0x00000000fa00000006');
    expect(() => blockExtraData(rulesAt(config, 300n), undefined)).toThrow('payload.eip1559Params');
  });

  it('FastLZ size: a run of zeros compresses, random-looking bytes do not', () => {
    expect(fastLzSize(new Uint8Array(1000))).toBeLessThan(100);
    const noisy = Uint8Array.from(Array.from({ length: 32 }, (_, i) => [...hexToBytes(keccak256(toHex(i)))]).flat());
    expect(fastLzSize(noisy)).toBeGreaterThan(1000);
  });

  it('witness state: an empty trie reads as empty, a missing node is an error naming it', async () => {
    const leafless = createWitnessState(new Map(), emptyTrieRoot);
    expect(await leafless.getAccount(createAddressFromString('0x4200000000000000000000000000000000000015'))).toBeUndefined();
    const root = keccak256(toRlp(['0x20', '0x01']));
    const missing = createWitnessState(new Map(), root);
    await expect(missing.getAccount(createAddressFromString('0x4200000000000000000000000000000000000015'))).rejects.toThrow(
      `witness incomplete: no preimage for ${root} (account 0x4200000000000000000000000000000000000015)`,
    );
  });
});
