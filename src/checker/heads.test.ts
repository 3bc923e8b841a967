import { describe, expect, it } from 'vitest';
import { createHeadClock, readyHeights } from './heads.ts';

describe('head clock', () => {
  it('counts every height at or below the first head read from that read', () => {
    const clock = createHeadClock();
    expect(clock.observe(20n, 1000)).toBe('higher');
    expect(clock.reachedAt(1n)).toBe(1000);
    expect(clock.reachedAt(13n)).toBe(1000);
    expect(clock.reachedAt(20n)).toBe(1000);
    expect(clock.reachedAt(21n)).toBeUndefined();
  });

  it('dates a height by the first read that reached it, and keeps the highest head when the node goes back', () => {
    const clock = createHeadClock();
    clock.observe(20n, 1000);
    expect(clock.observe(23n, 2000)).toBe('higher');
    expect(clock.observe(23n, 2500)).toBe('same');
    expect(clock.observe(22n, 3000)).toBe('lower');
    expect(clock.head).toBe(23n);
    expect(clock.reachedAt(21n)).toBe(2000);
    expect(clock.reachedAt(23n)).toBe(2000);
    expect(clock.observe(24n, 4000)).toBe('higher');
    expect(clock.reachedAt(24n)).toBe(4000);
  });

  it('forgets old reads without dating a height earlier than it was reached', () => {
    const clock = createHeadClock();
    clock.observe(10n, 1000);
    clock.observe(11n, 2000);
    clock.observe(12n, 3000);
    clock.forgetBelow(11n);
    expect(clock.reachedAt(5n)).toBe(2000);
    expect(clock.reachedAt(12n)).toBe(3000);
    expect(clock.head).toBe(12n);
  });
});

describe('readyHeights', () => {
  it('judges recorded heights below the head the node had at start', () => {
    const clock = createHeadClock();
    clock.observe(20n, 1000);
    // The gateway served 12 and 15 (behind the node), and 20 and 21 (its head, and ahead of it).
    expect(readyHeights([21n, 12n, 20n, 15n], clock, 4000, 3000)).toEqual([12n, 15n]);
  });

  it('waits for the grace after the node sealed a block past the height, lowest heights first', () => {
    const clock = createHeadClock();
    clock.observe(20n, 1000);
    clock.observe(21n, 5000);
    expect(readyHeights([20n, 19n], clock, 7000, 3000)).toEqual([19n]);
    expect(readyHeights([20n, 19n], clock, 8000, 3000)).toEqual([19n, 20n]);
  });

  it('judges nothing before the first head read', () => {
    expect(readyHeights([1n, 2n], createHeadClock(), 10_000, 0)).toEqual([]);
  });
});
