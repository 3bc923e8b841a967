import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { firstValueFrom, lastValueFrom, take, timeout, toArray } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log, LogRecord } from '../../src/log/port.ts';
import { kafkaBrokers, tempDir } from '../helpers/context.ts';

/**
 * One contract, two engines: everything flashlog relies on from its log, run against the
 * embedded SQLite log and a real Kafka broker.
 */
interface Engine {
  readonly name: string;
  /** Opens the log; a second call opens the same data again (a restart). */
  open(): Log;
}

const dir = tempDir();
afterAll(() => dir.remove());
const engines: Engine[] = [
  { name: 'embedded', open: () => createEmbeddedLog({ path: join(dir.path, 'contract.db') }) },
  { name: 'kafka', open: () => createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-contract-test' }) },
];

const read = (log: Log, options: Parameters<Log['consumer']>[0], count: number) => {
  const consumer = log.consumer(options);
  return {
    consumer,
    records: lastValueFrom(consumer.records$.pipe(take(count), toArray(), timeout(30_000))),
  };
};
const values = (records: LogRecord[]) => records.map((record) => record.value);

describe.each(engines)('log contract: $name', (engine) => {
  const run = randomUUID().slice(0, 8);
  const topicA = `contract.${run}.a`;
  const topicB = `contract.${run}.b`;

  it('creates topics idempotently and lists them', async () => {
    const log = engine.open();
    try {
      await log.ensureTopics([{ name: topicA }, { name: topicB, retentionMs: -1 }]);
      await log.ensureTopics([{ name: topicA }]);
      const listed = await log.listTopics();
      expect(listed).toEqual(expect.arrayContaining([topicA, topicB]));
      expect((await log.endOffsets(topicA)).reduce((sum, end) => sum + end.offset, 0n)).toBe(0n);
    } finally {
      await log.close();
    }
  });

  it('appends in order, keeps keys and values, and replays from the beginning', async () => {
    const log = engine.open();
    try {
      const produced = Array.from({ length: 50 }, (_, i) => ({ topic: topicA, key: 'k', value: JSON.stringify({ i, text: 'ünïcode ✓' }) }));
      await log.produce(produced.slice(0, 20));
      await log.produce(produced.slice(20));
      await log.produce([{ topic: topicB, key: null, value: 'b0' }]);
      expect((await log.endOffsets(topicA)).reduce((sum, end) => sum + end.offset, 0n)).toBe(50n);
      const { consumer, records } = read(log, { topics: [topicA] }, 50);
      const got = await records;
      await consumer.close();
      expect(values(got)).toEqual(produced.map((record) => record.value));
      expect(got.map((record) => Number(record.offset))).toEqual(Array.from({ length: 50 }, (_, i) => i));
      expect(got.every((record) => record.key === 'k' && record.topic === topicA && record.timestamp > 0)).toBe(true);
      await expect(log.produce([{ topic: `contract.${run}.missing`, key: null, value: 'x' }])).rejects.toThrow();
    } finally {
      await log.close();
    }
  });

  it('resumes a group from its committed offset after a restart', async () => {
    const group = `contract-${run}-group`;
    let log = engine.open();
    const first = read(log, { topics: [topicA], group }, 10);
    const firstTen = await first.records;
    const lastRecord = firstTen.at(-1)!;
    await first.consumer.commit([{ topic: topicA, partition: lastRecord.partition, offset: lastRecord.offset + 1n }]);
    await first.consumer.close();
    await log.close();

    log = engine.open(); // a restart: a new client on the same data
    try {
      const second = read(log, { topics: [topicA], group }, 5);
      const next = await second.records;
      await second.consumer.close();
      expect(next.map((record) => Number(record.offset))).toEqual([10, 11, 12, 13, 14]);
    } finally {
      await log.close();
    }
  });

  it('starts at the end for a new group with from=latest, and at a sought offset with seek', async () => {
    const log = engine.open();
    try {
      const latest = log.consumer({ topics: [topicB], group: `contract-${run}-latest`, from: 'latest' });
      const firstNew = firstValueFrom(latest.records$.pipe(timeout(30_000)));
      // Give the group time to join before producing (Kafka assigns partitions asynchronously).
      await new Promise((resolve) => setTimeout(resolve, engine.name === 'kafka' ? 4000 : 100));
      await log.produce([{ topic: topicB, key: null, value: 'b1' }]);
      expect((await firstNew).value).toBe('b1');
      await latest.close();

      const sought = read(log, { topics: [topicA], seek: [{ topic: topicA, partition: 0, offset: 45n }] }, 5);
      expect(values(await sought.records).map((value) => (JSON.parse(value) as { i: number }).i)).toEqual([45, 46, 47, 48, 49]);
      await sought.consumer.close();
    } finally {
      await log.close();
    }
  });

  it('delivers nothing while paused, then the rest once and in order after resume (backpressure)', async () => {
    const log = engine.open();
    try {
      const consumer = log.consumer({ topics: [topicA] });
      // Paused before the reader has begun (Kafka: before kafkajs runs): nothing arrives.
      consumer.pause();
      const got: LogRecord[] = [];
      let pauses = 0;
      const all = new Promise<void>((resolve, reject) => {
        consumer.records$.subscribe({
          next: (record) => {
            got.push(record);
            // Paused inside delivery, as `tail` does when stdout is full: no next record until resumed.
            if (got.length === 10 || got.length === 30) {
              pauses++;
              consumer.pause();
            }
            if (got.length === 50) resolve();
          },
          error: reject,
        });
      });
      const settle = () => new Promise((resolve) => setTimeout(resolve, engine.name === 'kafka' ? 3000 : 300));
      await settle();
      expect(got).toHaveLength(0);
      consumer.resume();
      for (const held of [10, 30]) {
        const deadline = Date.now() + 30_000;
        while (got.length < held && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        await settle();
        expect(got).toHaveLength(held);
        consumer.resume();
      }
      await all;
      await consumer.close();
      expect(pauses).toBe(2);
      expect(got.map((record) => Number(record.offset))).toEqual(Array.from({ length: 50 }, (_, i) => i));
    } finally {
      await log.close();
    }
  }, 60_000);

  it('delivers records produced while a consumer is live, in order', async () => {
    const log = engine.open();
    try {
      const live = log.consumer({ topics: [topicB], group: `contract-${run}-live`, from: 'latest' });
      const got = lastValueFrom(live.records$.pipe(take(100), toArray(), timeout(30_000)));
      await new Promise((resolve) => setTimeout(resolve, engine.name === 'kafka' ? 4000 : 100));
      for (let batch = 0; batch < 10; batch++) {
        await log.produce(Array.from({ length: 10 }, (_, i) => ({ topic: topicB, key: 'live', value: `live-${batch * 10 + i}` })));
      }
      expect(values(await got)).toEqual(Array.from({ length: 100 }, (_, i) => `live-${i}`));
      await live.close();
    } finally {
      await log.close();
    }
  });
});
