import { afterEach, describe, expect, it, vi } from 'vitest';
import { retryUntilAborted } from './retry.ts';

/** The bridge's retry of a request record whose handling failed, on fake timers. */
afterEach(() => vi.useRealTimers());

describe('retrying until answered or stopped', () => {
  it('runs the work again after each failure, waiting delayMs, and resolves with its answer', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    let calls = 0;
    const work = async () => {
      calls++;
      if (calls < 3) throw new Error(`failure ${calls}`);
      return 'answered';
    };
    const result = retryUntilAborted(work, { signal: new AbortController().signal, delayMs: 1000, onError: (e) => errors.push(e) });
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toBe(1); // the second try waits the whole delay
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(result).resolves.toBe('answered');
    expect(calls).toBe(3);
    expect(errors.map((e) => (e as Error).message)).toEqual(['failure 1', 'failure 2']);
  });

  it('stops waiting and resolves undefined once the signal aborts', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    let calls = 0;
    const result = retryUntilAborted(
      async () => {
        calls++;
        throw new Error('log unreachable');
      },
      { signal: controller.signal, delayMs: 60_000, onError: () => {} },
    );
    await vi.advanceTimersByTimeAsync(0);
    controller.abort();
    await expect(result).resolves.toBeUndefined();
    expect(calls).toBe(1);
  });

  it('does not run at all once stopped', async () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    const answer = await retryUntilAborted(async () => ++calls, { signal: controller.signal, delayMs: 1, onError: () => {} });
    expect(answer).toBeUndefined();
    expect(calls).toBe(0);
  });
});
