import { describe, expect, it } from 'vitest';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import type { Log, ProduceRecord } from './port.ts';
import { createPublisher } from './publisher.ts';

/** A log that fails while `down` is true and records what it accepted. */
function flakyLog() {
  const accepted: ProduceRecord[] = [];
  const state = { down: false, calls: 0 };
  const log = {
    kind: 'embedded',
    async produce(records: readonly ProduceRecord[]) {
      state.calls++;
      if (state.down) throw new Error('broker unavailable');
      accepted.push(...records);
      return [];
    },
  } as unknown as Log;
  return { log, accepted, state };
}
const quiet = () => ({ logger: createLogger({ level: 'silent' }), metrics: createMetricsRegistry({ defaults: false }) });
const records = (from: number, count: number): ProduceRecord[] =>
  Array.from({ length: count }, (_, i) => ({ topic: 't', key: null, value: String(from + i) }));

describe('publisher', () => {
  it('rides out an outage: keeps order, loses nothing, duplicates nothing', async () => {
    const { log, accepted, state } = flakyLog();
    const { logger, metrics } = quiet();
    const publisher = createPublisher(log, { logger, metrics, maxQueued: 10_000, batchSize: 7 });
    state.down = true;
    publisher.push(records(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 700));
    publisher.push(records(20, 30));
    expect(accepted).toHaveLength(0);
    expect(publisher.queued).toBe(50);
    expect(state.calls).toBeGreaterThan(1); // it retried
    state.down = false;
    await publisher.flush();
    expect(accepted.map((record) => Number(record.value))).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const errors = await metrics.getSingleMetric('flashlog_publish_errors_total')!.get();
    expect(errors.values[0]!.value).toBeGreaterThan(0);
  });

  it('drops the oldest beyond its bound and counts them', async () => {
    const { log, accepted, state } = flakyLog();
    const { logger, metrics } = quiet();
    const publisher = createPublisher(log, { logger, metrics, maxQueued: 10 });
    state.down = true;
    publisher.push(records(0, 25));
    expect(publisher.queued).toBe(10);
    state.down = false;
    await publisher.flush();
    expect(accepted.map((record) => Number(record.value))).toEqual(Array.from({ length: 10 }, (_, i) => 15 + i));
    const dropped = await metrics.getSingleMetric('flashlog_publish_dropped_total')!.get();
    expect(dropped.values[0]!.value).toBe(15);
  });

  it('keeps each append under its byte bound (a record larger than it goes alone)', async () => {
    const sizes: number[][] = [];
    const log = {
      kind: 'embedded',
      async produce(batch: readonly ProduceRecord[]) {
        sizes.push(batch.map((record) => record.value.length));
        return [];
      },
    } as unknown as Log;
    const { logger, metrics } = quiet();
    const publisher = createPublisher(log, { logger, metrics, maxQueued: 10_000, batchBytes: 1000 });
    const value = (length: number): ProduceRecord => ({ topic: 't', key: null, value: 'x'.repeat(length) });
    publisher.push([value(400), value(400), value(400), value(5000), value(10), value(990)]);
    await publisher.flush();
    expect(sizes).toEqual([[400, 400], [400], [5000], [10, 990]]);
  });
});
