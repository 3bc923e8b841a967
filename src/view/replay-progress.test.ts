import { describe, expect, it } from 'vitest';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { backlog, caughtUpWith, createReplayProgress, perSecondOf, type Replayed } from './replay-progress.ts';
import { initialViewState } from './state.ts';
import { createViewMetrics } from './view-metrics.ts';

const targets = [
  { topic: 'a', partition: 0, offset: 10n },
  { topic: 'b', partition: 0, offset: 4n },
];

describe('replay progress', () => {
  it('counts the backlog from the start or from the positions sought', () => {
    expect(backlog(targets)).toBe(14);
    expect(backlog(targets, [{ topic: 'a', partition: 0, offset: 7n }])).toBe(7);
    expect(backlog([])).toBe(0);
  });

  it('is caught up once every partition has reached its end offset', () => {
    const caughtUp = caughtUpWith(targets);
    expect(caughtUp({ ...initialViewState(), offsets: { 'a/0': 10n } })).toBe(false);
    expect(caughtUp({ ...initialViewState(), offsets: { 'a/0': 10n, 'b/0': 3n } })).toBe(false);
    expect(caughtUp({ ...initialViewState(), offsets: { 'a/0': 11n, 'b/0': 4n } })).toBe(true);
    expect(perSecondOf(50, 500)).toBe(100);
    expect(perSecondOf(50, 0)).toBe(50);
  });

  it('ends at once on an empty log, says whether it came from a snapshot, and forgets the snapshot when restarted', async () => {
    const registry = createMetricsRegistry();
    const results: Replayed[] = [];
    const options = { start: initialViewState(), logger: createLogger({ level: 'silent' }), metrics: createViewMetrics(registry) };
    const progress = createReplayProgress({ ...options, targets: [], fromSnapshot: true, onReplayed: (r) => results.push(r) });
    expect(progress.done()).toBe(false);
    progress.restart();
    progress.finishIfCaughtUp(initialViewState());
    progress.finishIfCaughtUp(initialViewState());
    expect(progress.done()).toBe(true);
    expect(results).toEqual([{ records: 0, ms: expect.any(Number), perSecond: 0, fromSnapshot: false, skipped: 0 }]);
    const ratio = (await registry.getSingleMetric('flashlog_view_replay_progress_ratio')!.get()).values[0]?.value;
    expect(ratio).toBe(1);
  });

  it('does not end while a partition is behind', () => {
    const results: Replayed[] = [];
    const progress = createReplayProgress({
      targets,
      start: initialViewState(),
      fromSnapshot: false,
      logger: createLogger({ level: 'silent' }),
      metrics: createViewMetrics(createMetricsRegistry()),
      onReplayed: (r) => results.push(r),
    });
    progress.finishIfCaughtUp({ ...initialViewState(), offsets: { 'a/0': 10n } });
    progress.observe({ ...initialViewState(), offsets: { 'a/0': 10n } });
    expect(progress.done()).toBe(false);
    progress.observe({ ...initialViewState(), offsets: { 'a/0': 10n, 'b/0': 4n } });
    expect(results).toHaveLength(1);
  });
});
