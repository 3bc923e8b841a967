/**
 * At most `concurrency` proofs at once: `acquire` waits for a free slot (first come, first
 * served), `release` hands it on. `wakeAll` lets every waiter go at shutdown.
 */
export interface Slots {
  acquire(): Promise<void>;
  release(): void;
  wakeAll(): void;
  /** Waiters, for stats. */
  readonly waiting: number;
}

export function createSlots(concurrency: number): Slots {
  const waiting: (() => void)[] = [];
  let running = 0;
  return {
    async acquire() {
      if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
      running++;
    },
    release() {
      running--;
      waiting.shift()?.();
    },
    wakeAll() {
      for (const wake of waiting.splice(0)) wake();
    },
    get waiting() {
      return waiting.length;
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
