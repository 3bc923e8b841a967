import { describe, expect, it } from 'vitest';
import { devnetLoadTps } from './load.ts';

describe('the devnet load rate (devnet and run --devnet)', () => {
  it('--reorg-every with no --load sends 10 tx/s, so each reorg has a transaction to withdraw', () => {
    expect(devnetLoadTps({ load: 0, reorgEvery: 5 })).toBe(10);
  });
  it('an explicit --load, or no reorgs, keeps the rate given', () => {
    expect(devnetLoadTps({ load: 3, reorgEvery: 5 })).toBe(3);
    expect(devnetLoadTps({ load: 0, reorgEvery: 0 })).toBe(0);
  });
});
