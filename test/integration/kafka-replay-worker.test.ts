import { randomUUID } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { firstValueFrom, lastValueFrom, take, tap, timeout, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka.ts';
import { maxRecordBytes } from '../../src/log/kafka-admin.ts';
import { createKafkaReplayConsumer } from '../../src/log/kafka-replay.ts';
import type { Log, LogRecord, ProduceRecord, RecordPosition } from '../../src/log/port.ts';
import { kafkaBrokers } from '../helpers/context.ts';

/**
 * The Kafka replay in a worker thread (src/log/kafka-replay.ts) against the real broker: every
 * record once, in order per partition, across the hand-over to the in-thread consumer while records
 * keep arriving, and a resume at sought offsets.
 */
const run = randomUUID().slice(0, 8);
const topicA = `replay-worker.${run}.a`;
const topicB = `replay-worker.${run}.b`;
let log: Log;

const record = (topic: string, i: number): ProduceRecord => ({
  topic,
  key: i % 7 === 0 ? null : `k${i % 5}`,
  value: JSON.stringify({ i, topic, text: 'ünïcode ✓', pad: 'x'.repeat(i % 300) }),
});
async function produce(topic: string, from: number, count: number): Promise<void> {
  const records = Array.from({ length: count }, (_, i) => record(topic, from + i));
  await log.produce(records);
}
/** Records read, per topic and key (Kafka keeps order per key: a key maps to one partition). */
function byPartition(records: readonly LogRecord[]): Map<string, LogRecord[]> {
  const groups = new Map<string, LogRecord[]>();
  for (const got of records) {
    const key = `${got.topic}/${got.partition}`;
    groups.set(key, [...(groups.get(key) ?? []), got]);
  }
  return groups;
}

beforeAll(async () => {
  log = createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-replay-worker-test' });
  await log.ensureTopics([{ name: topicA, partitions: 3 }, { name: topicB }]);
  await produce(topicA, 0, 3000);
  await produce(topicB, 0, 1200);
}, 60_000);
afterAll(() => log.close());

describe('kafka replay in a worker thread', () => {
  it('delivers every record once, in order, through the worker and then live after the hand-over', async () => {
    const workers = new Set<Worker>();
    const seeks: (readonly RecordPosition[])[] = [];
    let workerSeen = false;
    const consumer = createKafkaReplayConsumer(
      { topics: [topicA, topicB] },
      { brokers: kafkaBrokers(), clientId: 'flashlog-replay-worker-test', maxWaitMs: 100, maxBytesPerPartition: maxRecordBytes, workers },
      (seek) => {
        seeks.push(seek);
        return log.consumer({ topics: [topicA, topicB], seek });
      },
    );
    const total = 3000 + 1200 + 400 + 300;
    const records = lastValueFrom(
      consumer.records$.pipe(
        tap(() => (workerSeen ||= workers.size === 1)),
        take(total),
        toArray(),
        timeout(60_000),
      ),
    );
    // While the worker replays (and possibly after its end offsets were taken), more records arrive.
    await produce(topicA, 3000, 400);
    await produce(topicB, 1200, 300);
    const got = await records;
    await consumer.close();

    expect(workerSeen).toBe(true);
    expect(seeks).toHaveLength(1);
    expect(got).toHaveLength(total);
    const indexes = (topic: string) =>
      got
        .filter((one) => one.topic === topic)
        .map((one) => (JSON.parse(one.value) as { i: number }).i)
        .sort((a, b) => a - b);
    expect(indexes(topicA)).toEqual(Array.from({ length: 3400 }, (_, i) => i));
    expect(indexes(topicB)).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    for (const [key, partition] of byPartition(got)) {
      expect(
        partition.map((one) => one.offset),
        key,
      ).toEqual(partition.map((_, i) => BigInt(i)));
      // Keys, values and timestamps survive the trip through the worker's batch encoding.
      for (const one of partition) {
        const expected = record(one.topic, (JSON.parse(one.value) as { i: number }).i);
        expect(one.key).toBe(expected.key);
        expect(one.value).toBe(expected.value);
        expect(one.timestamp).toBeGreaterThan(1_600_000_000_000);
      }
    }
    // The hand-over started the in-thread consumer at the offset after the worker's last record.
    const handedAt = seeks[0]!.reduce((sum, position) => sum + position.offset, 0n);
    expect(handedAt).toBeGreaterThanOrEqual(4200n);
    expect(handedAt).toBeLessThanOrEqual(BigInt(total));
  }, 90_000);

  it('resumes at sought offsets: the first record of each partition is the one sought', async () => {
    const ends = await log.endOffsets(topicA);
    const seek = ends.map((end) => ({ topic: topicA, partition: end.partition, offset: end.offset - 10n }));
    const consumer = log.consumer({ topics: [topicA], seek, replayInWorker: true });
    const got = await lastValueFrom(consumer.records$.pipe(take(30), toArray(), timeout(60_000)));
    await consumer.close();
    for (const [key, partition] of byPartition(got)) {
      const sought = seek.find((position) => `${position.topic}/${position.partition}` === key)!;
      expect(partition.map((one) => one.offset)).toEqual(Array.from({ length: 10 }, (_, i) => sought.offset + BigInt(i)));
    }
    expect(byPartition(got).size).toBe(3);
  }, 60_000);

  it('with nothing to replay, hands over at once and follows live', async () => {
    const ends = await log.endOffsets(topicB);
    const consumer = log.consumer({ topics: [topicB], seek: ends, replayInWorker: true });
    const first = firstValueFrom(consumer.records$.pipe(timeout(60_000)));
    // Sought at the end: the record produced now is the first one, whenever the consumer joins.
    await produce(topicB, 5000, 1);
    const got = await first;
    await consumer.close();
    expect(got.offset).toBe(ends[0]!.offset);
    expect((JSON.parse(got.value) as { i: number }).i).toBe(5000);
  }, 60_000);
});
