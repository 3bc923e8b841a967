import { describe, expect, it } from 'vitest';
import { advance, type LevelHead } from './lifecycle.ts';

const head = (level: 'safe' | 'finalized', n: number): LevelHead => ({
  level,
  blockNumber: BigInt(n),
  blockHash: `0x${n.toString(16).padStart(64, '0')}`,
});

describe('safe and finalized heads', () => {
  it('reports a level when it advances, and only then', () => {
    const first = advance({}, [head('safe', 10), head('finalized', 4)]);
    expect(first.advanced).toEqual([head('safe', 10), head('finalized', 4)]);
    const same = advance(first.state, [head('safe', 10), head('finalized', 4)]);
    expect(same.advanced).toEqual([]);
    const back = advance(first.state, [head('safe', 9), head('finalized', 5)]);
    expect(back.advanced).toEqual([head('finalized', 5)]);
    expect(back.state).toEqual({ safe: 10n, finalized: 5n });
  });
});
