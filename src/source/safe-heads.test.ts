import { Subject, type Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Logger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import type { SourceEvent } from './port.ts';
import { safeHeads$ } from './safe-heads.ts';

/**
 * The poll's timing rule with fake timers: the first poll at once, then one every `pollMs`, never
 * sooner; a failed poll keeps the cadence; stop$ ends it. The node is a stub answering
 * `optimism_syncStatus` from whatever heads the test sets.
 */
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function consensusStub() {
  const calls: number[] = [];
  let heads = { safe: 10, finalized: 5 };
  let failing = false;
  const upstream: Upstream = {
    url: 'http://consensus.invalid',
    async call(method) {
      expect(method).toBe('optimism_syncStatus');
      calls.push(Date.now());
      if (failing) throw new Error('connection refused');
      return {
        safe_l2: { hash: hash(heads.safe), number: heads.safe },
        finalized_l2: { hash: hash(heads.finalized), number: heads.finalized },
      };
    },
  };
  return {
    upstream,
    calls,
    set: (next: typeof heads) => void (heads = next),
    fail: (on: boolean) => void (failing = on),
  };
}

const quietLogger = () =>
  ({ info: vi.fn(), warn: vi.fn() }) as unknown as Logger & { info: ReturnType<typeof vi.fn>; warn: ReturnType<typeof vi.fn> };

let subscription: Subscription | undefined;
beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  subscription?.unsubscribe();
  vi.useRealTimers();
});

describe('safeHeads$ polling', () => {
  it('polls at once, then every pollMs and never sooner; emits a level only when it advances; stop$ ends the polls', async () => {
    const node = consensusStub();
    const stop$ = new Subject<void>();
    const events: SourceEvent[] = [];
    const metrics = createMetricsRegistry({ defaults: false });
    subscription = safeHeads$({
      rpc: node.upstream,
      consensus: node.upstream,
      pollMs: 1000,
      stop$,
      logger: quietLogger(),
      metrics,
    }).subscribe((event) => events.push(event));

    await vi.advanceTimersByTimeAsync(0);
    expect(node.calls).toEqual([1_000_000]);
    expect(events).toEqual([
      { type: 'lifecycle', level: 'safe', blockNumber: 10n, blockHash: hash(10) },
      { type: 'lifecycle', level: 'finalized', blockNumber: 5n, blockHash: hash(5) },
    ]);

    await vi.advanceTimersByTimeAsync(999);
    expect(node.calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(node.calls).toEqual([1_000_000, 1_001_000]);
    expect(events).toHaveLength(2); // the same heads again: nothing new

    node.set({ safe: 12, finalized: 5 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(node.calls).toEqual([1_000_000, 1_001_000, 1_002_000]);
    expect(events.slice(2)).toEqual([{ type: 'lifecycle', level: 'safe', blockNumber: 12n, blockHash: hash(12) }]);

    stop$.next();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(node.calls).toHaveLength(3);
  });

  it('a failing node keeps the cadence: each failure is counted, warned about once, and the first good poll resumes', async () => {
    const node = consensusStub();
    const logger = quietLogger();
    const metrics = createMetricsRegistry({ defaults: false });
    const events: SourceEvent[] = [];
    subscription = safeHeads$({
      rpc: node.upstream,
      consensus: node.upstream,
      pollMs: 500,
      stop$: new Subject(),
      logger,
      metrics,
    }).subscribe((event) => events.push(event));
    await vi.advanceTimersByTimeAsync(0);
    expect(events).toHaveLength(2);

    node.fail(true);
    await vi.advanceTimersByTimeAsync(1500);
    expect(node.calls.map((at) => at - 1_000_000)).toEqual([0, 500, 1000, 1500]);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    const failures = await metrics.getSingleMetric('flashlog_lifecycle_errors_total')!.get();
    expect(failures.values).toEqual([expect.objectContaining({ labels: { source: 'consensus' }, value: 3 })]);

    node.fail(false);
    node.set({ safe: 11, finalized: 6 });
    await vi.advanceTimersByTimeAsync(500);
    expect(node.calls.map((at) => at - 1_000_000)).toEqual([0, 500, 1000, 1500, 2000]);
    expect(logger.info).toHaveBeenCalledWith('safe/finalized heads: answering again');
    expect(events.slice(2).map((event) => event.type === 'lifecycle' && [event.level, event.blockNumber])).toEqual([
      ['safe', 11n],
      ['finalized', 6n],
    ]);
  });

  it('pollMs 0 turns the poll off', async () => {
    const node = consensusStub();
    let completed = false;
    subscription = safeHeads$({
      rpc: node.upstream,
      pollMs: 0,
      stop$: new Subject(),
      logger: quietLogger(),
      metrics: createMetricsRegistry({ defaults: false }),
    }).subscribe({ complete: () => (completed = true) });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(completed).toBe(true);
    expect(node.calls).toEqual([]);
  });
});
