import { describe, expect, it } from 'vitest';
import {
  baseMainnetRollupConfig,
  baseSepoliaRollupConfig,
  knownRollupConfigs,
  opMainnetRollupConfig,
  opSepoliaRollupConfig,
  unichainRollupConfig,
  unichainSepoliaRollupConfig,
} from './chains.ts';
import { baseForks, opForks, parseRollupConfig, rulesAt, type OpFork, type RollupConfig } from './rollup-config.ts';

/** Each known chain with its ladder and the fork after Jovian that brings Osaka's EVM. */
const chains: [string, RollupConfig, readonly OpFork[]][] = [
  ['OP Mainnet', opMainnetRollupConfig, opForks],
  ['OP Sepolia', opSepoliaRollupConfig, opForks],
  ['Unichain', unichainRollupConfig, opForks],
  ['Unichain Sepolia', unichainSepoliaRollupConfig, opForks],
  ['Base', baseMainnetRollupConfig, baseForks],
  ['Base Sepolia', baseSepoliaRollupConfig, baseForks],
];

describe('fork ladders', () => {
  it('knows OP Mainnet, OP Sepolia, Unichain, Unichain Sepolia, Base, Base Sepolia and the devnet by chain id', () => {
    expect([...knownRollupConfigs.keys()].sort((a, b) => a - b)).toEqual([10, 130, 1301, 1337, 8453, 84532, 11155420]);
    for (const [, config] of chains) expect(parseRollupConfig(config)).toEqual(config);
  });

  it('the activation times the sources give (superchain registry, base/base, docs.base.org)', () => {
    const times = (config: RollupConfig) => ({
      jovian: config.jovian_time,
      karst: config.karst_time,
      lagoon: config.lagoon_time,
      azul: config.azul_time,
      beryl: config.beryl_time,
      cobalt: config.cobalt_time,
      denim: config.denim_time,
    });
    // Lagoon: OP Mainnet and Unichain 2027-01-11 16:00:01 UTC, OP Sepolia and Unichain Sepolia 2026-12-10 16:00:01 UTC.
    const lagoonMainnet = Date.UTC(2027, 0, 11, 16, 0, 1) / 1000;
    const lagoonSepolia = Date.UTC(2026, 11, 10, 16, 0, 1) / 1000;
    expect(times(opMainnetRollupConfig)).toEqual({ jovian: 1764691201, karst: 1783526401, lagoon: lagoonMainnet });
    expect(times(unichainRollupConfig)).toEqual({ jovian: 1764691201, karst: 1783526401, lagoon: lagoonMainnet });
    expect(times(opSepoliaRollupConfig)).toMatchObject({ karst: 1781712001, lagoon: lagoonSepolia });
    expect(times(unichainSepoliaRollupConfig)).toMatchObject({ karst: 1781712001, lagoon: lagoonSepolia });
    expect([lagoonMainnet, lagoonSepolia]).toEqual([1799683201, 1796918401]);
    expect(times(baseMainnetRollupConfig)).toEqual({
      jovian: 1764691201,
      azul: 1779991200,
      beryl: 1782410400,
      cobalt: 1790791200,
      denim: Date.UTC(2026, 10, 5, 18) / 1000,
    });
    expect(times(baseSepoliaRollupConfig)).toMatchObject({ azul: 1776708000, beryl: 1781805600, denim: Date.UTC(2026, 9, 21, 18) / 1000 });
  });

  it.each(chains)(
    '%s: every fork of its ladder activates at its time, with its predecessors, and none of the other ladder',
    (_, config, ladder) => {
      const blockTime = BigInt(config.block_time);
      for (const [index, fork] of ladder.entries()) {
        const time = config[`${fork}_time`];
        if (time === undefined || time === null || time === 0) continue;
        const at = BigInt(time);
        const before = rulesAt(config, at - 1n);
        const after = rulesAt(config, at, at - blockTime);
        expect(before.active(fork), `${fork} before ${at}`).toBe(false);
        expect(after.active(fork), `${fork} at ${at}`).toBe(true);
        expect(after.fork).toBe(fork);
        expect(ladder.slice(0, index).every((older) => after.active(older))).toBe(true);
        expect(after.activationBlock(fork)).toBe(true);
        expect(rulesAt(config, at + blockTime, at).activationBlock(fork)).toBe(false);
      }
      const other = ladder === opForks ? (['azul', 'beryl', 'cobalt', 'denim'] as const) : (['karst', 'lagoon'] as const);
      for (const fork of other) expect(rulesAt(config, 2n ** 40n).active(fork)).toBe(false);
    },
  );

  it('the EVM: Osaka from Karst (OP, Unichain) and Azul (Base), Prague between Isthmus and them', () => {
    const at = (config: RollupConfig, time: number | null | undefined, offset = 0n) => rulesAt(config, BigInt(time!) + offset).evmHardfork;
    expect(at(opMainnetRollupConfig, opMainnetRollupConfig.karst_time, -1n)).toBe('prague');
    expect(at(opMainnetRollupConfig, opMainnetRollupConfig.karst_time)).toBe('osaka');
    expect(at(unichainRollupConfig, unichainRollupConfig.karst_time)).toBe('osaka');
    expect(at(opMainnetRollupConfig, opMainnetRollupConfig.lagoon_time)).toBe('osaka');
    expect(at(baseMainnetRollupConfig, baseMainnetRollupConfig.azul_time, -1n)).toBe('prague');
    expect(at(baseMainnetRollupConfig, baseMainnetRollupConfig.azul_time)).toBe('osaka');
    expect(at(baseMainnetRollupConfig, baseMainnetRollupConfig.denim_time)).toBe('osaka');
  });

  it("cascades on Base's ladder only up to Jovian: a Base chain that sets only denim_time runs Denim's EVM with no other fork in its config", () => {
    // base/base crates/common/genesis/src/rollup.rs @01d66da3: `is_jovian_active` and the Base forks
    // imply nothing earlier; the EVM runs the newest active fork (`BaseUpgrade::from_timestamp`, Osaka
    // from Azul on). Base's own Denim vectors are such a chain (test/fixtures/base-denim-native).
    const config = parseRollupConfig({
      ...baseMainnetRollupConfig,
      ...Object.fromEntries(
        ['regolith', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus'].map((f) => [`${f}_time`, null]),
      ),
      jovian_time: null,
      azul_time: null,
      beryl_time: null,
      cobalt_time: null,
      denim_time: 500,
    });
    const rules = rulesAt(config, 500n);
    expect(['regolith', 'jovian', 'azul', 'beryl', 'cobalt', 'denim'].map((fork) => rules.active(fork as OpFork))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
    expect(rules.fork).toBe('denim');
    expect(rules.evmHardfork).toBe('osaka');
    expect(rules.activationBlock('denim')).toBe(true);
    expect(rulesAt(config, 499n).fork).toBe('bedrock');
    // The OP forks still cascade among themselves: Jovian alone brings Regolith to Isthmus, not Azul.
    const jovian = rulesAt(parseRollupConfig({ ...config, denim_time: null, jovian_time: 500 }), 500n);
    expect(['regolith', 'ecotone', 'isthmus', 'jovian', 'azul'].map((fork) => jovian.active(fork as OpFork))).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(jovian.evmHardfork).toBe('prague');
  });

  it('Denim blocks share a second: the activation block is told apart by its parent timestamp', () => {
    const denim = BigInt(baseMainnetRollupConfig.denim_time!);
    expect(rulesAt(baseMainnetRollupConfig, denim, denim - 2n).activationBlock('denim')).toBe(true);
    expect(rulesAt(baseMainnetRollupConfig, denim, denim).activationBlock('denim')).toBe(false);
    expect(rulesAt(baseMainnetRollupConfig, denim + 1n, denim).activationBlock('denim')).toBe(false);
  });

  it("reads base/base's nested form (base.azul, v2 for beryl) and refuses a config on both ladders", () => {
    const { azul_time: _a, beryl_time: _b, cobalt_time: _c, denim_time: _d, ...op } = baseMainnetRollupConfig;
    const nested = parseRollupConfig({ ...op, base: { v1: 100, beryl: 200 } });
    expect([nested.azul_time, nested.beryl_time]).toEqual([100, 200]);
    expect(rulesAt(nested, 200n).fork).toBe('beryl');
    expect(() => parseRollupConfig({ ...baseMainnetRollupConfig, karst_time: 5 }, 'cfg')).toThrow(
      "cfg.karst_time: a chain on Base's ladder (azul_time) has no Karst",
    );
    expect(() => parseRollupConfig({ ...baseMainnetRollupConfig, lagoon_time: 5 }, 'cfg')).toThrow(
      "cfg.lagoon_time: a chain on Base's ladder (azul_time) has no Lagoon",
    );
  });
});
