import { describe, expect, it } from 'vitest';
import { createCommitWindow } from './commit-window.ts';

describe('the commit window', () => {
  it('commits a partition only up to its first unfinished record, whatever finished after it', () => {
    const window = createCommitWindow();
    const a0 = window.take(0, 0n);
    const a1 = window.take(0, 1n);
    const a2 = window.take(0, 2n);
    const b0 = window.take(1, 0n);
    expect(window.finish(a1)).toBeUndefined(); // offset 0 still running
    expect(window.finish(a2)).toBeUndefined();
    expect(window.finish(b0)).toBe(1n); // the other partition is not held back
    expect(window.finish(a0)).toBe(3n); // 0, 1 and 2 finished: commit past all three
  });
});
