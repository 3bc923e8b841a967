import { keccak256, toHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { fillPlan, resumeCandidates, walkGap, type LoggedBlock } from './resume.ts';

const logged = (n: number, label = 'a'): LoggedBlock => ({
  number: BigInt(n),
  hash: keccak256(toHex(`${label}${n}`)),
  transactions: [],
  logs: [],
});

describe('where a restarted ingest resumes', () => {
  it('the newest blocks the log holds, newest first, the later record winning at a height held twice', () => {
    const records = [logged(7), logged(8), logged(9), logged(9, 'b'), logged(6)];
    expect(resumeCandidates(records, 3)).toEqual([logged(9, 'b'), logged(8), logged(7)]);
    expect(resumeCandidates([], 3)).toEqual([]);
    expect(resumeCandidates(records, 0)).toEqual([]);
  });

  it('every missing block within --max-backfill-blocks is read, none is a gap', () => {
    expect(fillPlan(100n, 105n, 600)).toEqual({ backfill: { from: 101n, to: 104n }, gap: null });
    expect(fillPlan(100n, 701n, 600)).toEqual({ backfill: { from: 101n, to: 700n }, gap: null });
  });

  it('nothing missing, or nothing published yet: nothing to read, no gap', () => {
    expect(fillPlan(100n, 101n, 600)).toEqual({ backfill: null, gap: null });
    expect(fillPlan(100n, 90n, 600)).toEqual({ backfill: null, gap: null });
    expect(fillPlan(null, 500n, 600)).toEqual({ backfill: null, gap: null });
  });

  it('more missing than allowed: the newest are read, the oldest are one gap just below them', () => {
    expect(fillPlan(100n, 1000n, 600)).toEqual({ backfill: { from: 400n, to: 999n }, gap: { from: 101n, to: 399n } });
    expect(fillPlan(100n, 702n, 600)).toEqual({ backfill: { from: 102n, to: 701n }, gap: { from: 101n, to: 101n } });
    expect(fillPlan(100n, 110n, 0)).toEqual({ backfill: null, gap: { from: 101n, to: 109n } });
  });

  it('a gap and a backfill cover every missing number once (any bound)', () => {
    for (const max of [0, 1, 3, 7, 50]) {
      for (const next of [101n, 102n, 105n, 140n]) {
        const plan = fillPlan(100n, next, max);
        const covered: bigint[] = [];
        for (const range of [plan.gap, plan.backfill]) if (range) for (let n = range.from; n <= range.to; n++) covered.push(n);
        const expected: bigint[] = [];
        for (let n = 101n; n < next; n++) expected.push(n);
        expect(covered).toEqual(expected);
        expect(plan.backfill ? Number(plan.backfill.to - plan.backfill.from + 1n) : 0).toBeLessThanOrEqual(max);
      }
    }
  });

  it('the gap a walk back leaves: between the newest block held and the oldest block walked', () => {
    expect(walkGap(100n, 701n)).toEqual({ from: 101n, to: 700n });
    expect(walkGap(100n, 101n)).toBeNull();
    expect(walkGap(100n, 50n)).toBeNull();
    expect(walkGap(null, 701n)).toBeNull();
  });
});
