import { describe, expect, it } from 'vitest';
import { parseRollupConfig } from '../op/rollup-config.ts';
import { baseMainnetRollupConfig } from '../op/chains.ts';
import { activatedScheduleId, contractUpgrades, nextScheduleLink, scheduleIdOf, upgradeScheduleOf, zeroScheduleId } from './schedule-id.ts';

/**
 * Golden values from base/base, whose enclave computes the scheduleId the contract pins:
 * `crates/proof/proof/src/schedule_id.rs` (`schedule_id_matches_contract_golden_value`: the
 * ProtocolVersions schedule [10, 20, 0, …, 0, 30] with Azul at 30) and
 * `crates/proof/client/tests/denim_native.rs` @6cf00165 (chain 999999999, only Denim, at t = 14).
 */
describe('scheduleId', () => {
  it('reproduces base/base schedule_id.rs golden value for [10, 20, 0 … 0, 30]', () => {
    const timestamps = contractUpgrades.map((u) => (u === 'regolith' ? 10n : u === 'canyon' ? 20n : u === 'azul' ? 30n : 0n));
    expect(activatedScheduleId(timestamps, 30n)).toBe('0xc04583a182a2a57476d1ca57f9e5e7aa24f1eee188221f75fe17634b8a63f00c');
  });

  it("reproduces denim_native.rs's schedule id from that chain's rollup config", () => {
    const config = parseRollupConfig({
      l2_chain_id: 999_999_999,
      block_time: 2,
      denim_time: 14,
      chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
      genesis: {
        l1: { hash: `0x${'11'.repeat(32)}`, number: 0 },
        l2: { hash: `0x${'22'.repeat(32)}`, number: 0 },
        l2_time: 10,
        system_config: {
          batcherAddr: `0x${'00'.repeat(20)}`,
          overhead: `0x${'00'.repeat(32)}`,
          scalar: `0x${'00'.repeat(32)}`,
          gasLimit: 300_000_000,
        },
      },
    });
    // claim block 7 (the default schedule block) and the override block 8 give the same id
    expect(scheduleIdOf(config, 7)).toBe('0x3b364659563c6841d115a6d137ade3201a59bfb84f7987f67ee4a45b62f30836');
    expect(scheduleIdOf(config, 8)).toBe('0x3b364659563c6841d115a6d137ade3201a59bfb84f7987f67ee4a45b62f30836');
    // block 1 is at t = 12, before Denim: nothing is active, the seed
    expect(scheduleIdOf(config, 1)).toBe(zeroScheduleId);
  });

  it('is inclusive at the activation time and commits inactive gaps below the active upgrade', () => {
    expect(activatedScheduleId([10n], 9n)).toBe(zeroScheduleId);
    expect(activatedScheduleId([10n], 10n)).toBe(nextScheduleLink(zeroScheduleId, 0, 10n));
    const gap = nextScheduleLink(nextScheduleLink(nextScheduleLink(zeroScheduleId, 0, 10n), 1, 50n), 2, 30n);
    expect(activatedScheduleId([10n, 50n, 30n, 1000n], 30n)).toBe(gap);
  });

  it("reads Base mainnet's fork times in registration order, genesis-active Regolith at the genesis time", () => {
    const schedule = upgradeScheduleOf(baseMainnetRollupConfig);
    expect(schedule.length).toBe(contractUpgrades.length);
    expect(schedule[0]).toBe(1686789347n);
    expect(schedule[contractUpgrades.indexOf('pectra_blob_schedule')]).toBe(0n);
    expect(schedule[contractUpgrades.indexOf('denim')]).toBe(1793901600n);
  });

  it('puts a genesis-active fork at t = 1 on a chain without genesis, and needs a timestamp there', () => {
    const config = parseRollupConfig({
      l2_chain_id: 1337,
      block_time: 1,
      regolith_time: 0,
      canyon_time: 0,
      jovian_time: 500,
      chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
    });
    expect(upgradeScheduleOf(config).slice(0, 3)).toEqual([1n, 1n, 0n]);
    expect(scheduleIdOf(config, 3, 100n)).toBe(nextScheduleLink(nextScheduleLink(zeroScheduleId, 0, 1n), 1, 1n));
    expect(() => scheduleIdOf(config, 3)).toThrow(/block 3 has no L2 timestamp/);
  });
});
