import { describe, expect, it } from 'vitest';
import { forksAtGenesis, parseRollupConfig } from '../op/rollup-config.ts';
import { isDenimBlock, l2ScheduleOf, nextTimestamp, priorBlocksNeeded } from './schedule.ts';

/**
 * The L2 block schedule against base/base's `RollupConfig::l2_block_timestamp_millis` worked by
 * hand: a chain whose genesis is block 100 at 1,000 s with 2 s blocks, and Denim at 1,005 s, which
 * is not on a block: its activation block is the first at or past it, 103 (at 1,006 s).
 */
const rollup = parseRollupConfig({
  l2_chain_id: 8453,
  block_time: 2,
  ...forksAtGenesis('jovian'),
  denim_time: 1005,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
  genesis: {
    l1: { hash: `0x${'11'.repeat(32)}`, number: 7 },
    l2: { hash: `0x${'22'.repeat(32)}`, number: 100 },
    l2_time: 1000,
    system_config: {
      batcherAddr: `0x${'33'.repeat(20)}`,
      overhead: `0x${'00'.repeat(32)}`,
      scalar: `0x${'00'.repeat(32)}`,
      gasLimit: 30_000_000,
    },
  },
});

describe('l2ScheduleOf', () => {
  it('keeps the legacy 2 s schedule before the activation block and 200 ms from it on', () => {
    const schedule = l2ScheduleOf(rollup);
    expect(schedule.denimBlock).toBe(103n);
    const blocks = [100n, 101n, 102n, 103n, 104n, 107n, 108n, 109n];
    expect(blocks.map((n) => schedule.millis(n))).toEqual([
      1_000_000n,
      1_002_000n,
      1_004_000n,
      1_006_000n,
      1_006_200n,
      1_006_800n,
      1_007_000n,
      1_007_200n,
    ]);
    expect(blocks.map((n) => schedule.seconds(n))).toEqual([1000n, 1002n, 1004n, 1006n, 1006n, 1006n, 1007n, 1007n]);
    expect(blocks.map((n) => schedule.millisPart(n))).toEqual([0, 0, 0, 0, 200, 800, 0, 200]);
    expect(blocks.map((n) => isDenimBlock(rollup, n))).toEqual([false, false, false, true, true, true, true, true]);
  });

  it('gives the next header timestamp from the schedule once Denim is active, else the parent time plus the block time', () => {
    expect(nextTimestamp(rollup, { number: 101n, timestamp: 1002n })).toBe(1004n);
    expect(nextTimestamp(rollup, { number: 105n, timestamp: 1006n })).toBe(1006n);
    expect(nextTimestamp(rollup, { number: 107n, timestamp: 1006n })).toBe(1007n);
    const opChain = parseRollupConfig({ ...rollup, denim_time: null, azul_time: null });
    expect(nextTimestamp(opChain, { number: 107n, timestamp: 1014n })).toBe(1016n);
    expect(isDenimBlock(opChain, 107n)).toBe(false);
  });

  it('asks the host for one second of blocks before a Denim agreed block, every block before that', () => {
    expect(priorBlocksNeeded(rollup, 101n)).toBeUndefined();
    expect(priorBlocksNeeded(rollup, 102n)).toBe(5);
    expect(priorBlocksNeeded(rollup, 150n)).toBe(5);
  });
});
