import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Worker } from 'node:worker_threads';
import { firstValueFrom, lastValueFrom, take, timeout, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log, LogRecord, ProduceRecord } from '../../src/log/port.ts';
import { join } from 'node:path';
import { allTopics } from '../../src/records/topics.ts';
import type { ViewState } from '../../src/view/state.ts';
import { materialize } from '../../streams/materialize.ts';
import { createLogger } from '../../src/obs/logger.ts';
import { kafkaBrokers, tempDir, testContext } from '../helpers/context.ts';
import { prefixedLog } from '../helpers/prefixed-log.ts';
import { blockBuilder, signedTransfers } from '../helpers/view-records.ts';

/**
 * A replay read by a worker thread (ConsumeOptions.replayInWorker: src/log/kafka/worker-replay.ts,
 * src/log/kafka/replay-worker.ts) against a real Kafka broker: every record once, in order per
 * partition, keys and values intact, across the hand-over to the in-thread consumer while records
 * keep arriving; a resume at sought offsets; and nothing to replay.
 */
// Kafka only: the embedded log reads in its own thread (see src/log/embedded/embedded.ts).
const engines = [
  {
    name: 'kafka',
    partitions: 3,
    open: () => createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-replay-worker-test' }),
  },
];

const record = (topic: string, i: number): ProduceRecord => ({
  topic,
  key: i % 7 === 0 ? null : `k${i % 5}`,
  value: JSON.stringify({ i, topic, text: i % 11 === 0 ? 'ünïcode ✓' : 'ascii', pad: 'x'.repeat(i % 300) }),
});
const index = (one: LogRecord) => (JSON.parse(one.value) as { i: number }).i;
function byPartition(records: readonly LogRecord[]): Map<string, LogRecord[]> {
  const groups = new Map<string, LogRecord[]>();
  for (const got of records) {
    const key = `${got.topic}/${got.partition}`;
    groups.set(key, [...(groups.get(key) ?? []), got]);
  }
  return groups;
}

/** The worker threads started while `work` runs, and whether each has ended. */
async function watchWorkers<T>(work: () => Promise<T>): Promise<{ result: T; started: number; ended: number }> {
  let started = 0;
  let ended = 0;
  const onWorker = (message: unknown) => {
    started++;
    (message as { worker: Worker }).worker.once('exit', () => ended++);
  };
  subscribe('worker_threads', onWorker);
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { result, started, ended };
  } finally {
    unsubscribe('worker_threads', onWorker);
  }
}

describe.each(engines)('log replay in a worker thread: $name', (engine) => {
  const run = randomUUID().slice(0, 8);
  const topicA = `replay-worker.${run}.a`;
  const topicB = `replay-worker.${run}.b`;
  let log: Log;
  const produce = (topic: string, from: number, count: number) =>
    log.produce(Array.from({ length: count }, (_, i) => record(topic, from + i)));

  beforeAll(async () => {
    log = engine.open();
    await log.ensureTopics([{ name: topicA, partitions: engine.partitions }, { name: topicB }]);
    await produce(topicA, 0, 3000);
    await produce(topicB, 0, 1200);
  }, 60_000);
  afterAll(() => log.close());

  it('delivers every record once, in order, through the worker and then live after the hand-over', async () => {
    const total = 3000 + 1200 + 400 + 300;
    const {
      result: got,
      started,
      ended,
    } = await watchWorkers(async () => {
      const consumer = log.consumer({ topics: [topicA, topicB], replayInWorker: true });
      const records = lastValueFrom(consumer.records$.pipe(take(total), toArray(), timeout(60_000)));
      // While the worker replays (before or after it took its end offsets), more records arrive.
      await produce(topicA, 3000, 400);
      await produce(topicB, 1200, 300);
      const all = await records;
      await consumer.close();
      return all;
    });
    // One worker read the replay and ended at the hand-over.
    expect(started).toBe(1);
    expect(ended).toBe(1);
    expect(got).toHaveLength(total);
    const indexes = (topic: string) =>
      got
        .filter((one) => one.topic === topic)
        .map(index)
        .sort((a, b) => a - b);
    expect(indexes(topicA)).toEqual(Array.from({ length: 3400 }, (_, i) => i));
    expect(indexes(topicB)).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    expect(byPartition(got).size).toBe(engine.partitions + 1);
    for (const [key, partition] of byPartition(got)) {
      expect(
        partition.map((one) => one.offset),
        key,
      ).toEqual(partition.map((_, i) => BigInt(i)));
      // Keys, values and timestamps survive the worker's batch encoding (ASCII and UTF-8 batches).
      for (const one of partition) {
        const expected = record(one.topic, index(one));
        expect(one.key).toBe(expected.key);
        expect(one.value).toBe(expected.value);
        expect(one.timestamp).toBeGreaterThan(1_600_000_000_000);
      }
    }
  }, 90_000);

  it('a paused replay delivers nothing until resumed, then every record once, in order (backpressure through the worker)', async () => {
    // What topicB holds now (1,200 at start, 1,500 after the first test).
    const total = Number((await log.endOffsets(topicB))[0]!.offset);
    expect(total).toBeGreaterThan(1000);
    const consumer = log.consumer({ topics: [topicB], replayInWorker: true });
    const got: LogRecord[] = [];
    const all = new Promise<void>((resolve, reject) => {
      consumer.records$.subscribe({
        next: (one) => {
          got.push(one);
          // Paused inside delivery, as `tail` does when stdout is full.
          if (got.length === 100) consumer.pause();
          if (got.length === total) resolve();
        },
        error: reject,
      });
    });
    const deadline = Date.now() + 30_000;
    while (got.length < 100 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(got).toHaveLength(100);
    consumer.resume();
    await all;
    await consumer.close();
    expect(got.map(index)).toEqual(Array.from({ length: total }, (_, i) => i));
  }, 60_000);

  it('loses and repeats nothing when the worker dies mid-replay: this thread reads on from there', async () => {
    // 30 MB in one partition: several fetches of at most 8 MiB, so the worker is killed mid-replay.
    const topic = `replay-worker.${run}.big`;
    await log.ensureTopics([{ name: topic }]);
    const big = Array.from({ length: 3000 }, (_, i) => ({ topic, key: null, value: JSON.stringify({ i, pad: 'y'.repeat(10_000) }) }));
    for (let i = 0; i < big.length; i += 500) await log.produce(big.slice(i, i + 500));
    const warnings: string[] = [];
    const logged = createLogger({ level: 'warn', destination: { write: (line: string) => void warnings.push(line) } });
    const watched = createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-replay-worker-test', logger: logged });
    let killed = false;
    const kill = (message: unknown) => {
      const { worker } = message as { worker: Worker };
      worker.once('message', () => {
        killed = true;
        void worker.terminate();
      });
    };
    subscribe('worker_threads', kill);
    try {
      const consumer = watched.consumer({ topics: [topic], replayInWorker: true });
      const got = await lastValueFrom(consumer.records$.pipe(take(big.length), toArray(), timeout(60_000)));
      await consumer.close();
      expect(killed).toBe(true);
      expect(warnings.filter((line) => line.includes('log replay worker failed; reading on in this thread'))).toHaveLength(1);
      expect(got.map((one) => one.offset)).toEqual(big.map((_, i) => BigInt(i)));
      expect(got.map((one) => one.value)).toEqual(big.map((one) => one.value));
    } finally {
      unsubscribe('worker_threads', kill);
      await watched.close();
    }
  }, 60_000);

  it('resumes at sought offsets: the first record of each partition is the one sought', async () => {
    const ends = await log.endOffsets(topicA);
    const seek = ends.map((end) => ({ topic: topicA, partition: end.partition, offset: end.offset - 10n }));
    const consumer = log.consumer({ topics: [topicA], seek, replayInWorker: true });
    const got = await lastValueFrom(consumer.records$.pipe(take(10 * engine.partitions), toArray(), timeout(60_000)));
    await consumer.close();
    expect(byPartition(got).size).toBe(engine.partitions);
    for (const [key, partition] of byPartition(got)) {
      const sought = seek.find((position) => `${position.topic}/${position.partition}` === key)!;
      expect(partition.map((one) => one.offset)).toEqual(Array.from({ length: 10 }, (_, i) => sought.offset + BigInt(i)));
    }
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
    expect(index(got)).toBe(5000);
  }, 60_000);
});

describe('the view replayed through the worker', () => {
  it('builds the same view as an in-thread replay, and resumes from its snapshot at the right offset', async () => {
    const prefix = `replayview${randomUUID().slice(0, 8)}-`;
    const log = prefixedLog(createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-replay-worker-test', maxWaitMs: 50 }), prefix);
    const dir = tempDir('flashlog-replay-worker-');
    const snapshot = { path: join(dir.path, 'view.snapshot.json'), intervalMs: 0 };
    const pool = await signedTransfers(6);
    const produceBlocks = async (from: bigint, count: bigint) => {
      for (let number = from; number < from + count; number++) {
        const block = blockBuilder(number);
        await log.produce([...block.flashblock(pool.slice(0, 2), { logsPerTx: 2 }), ...block.flashblock(pool.slice(2, 5))]);
      }
    };
    // The whole state but its sequence number and last change; offsets by key (the order topics were first read in differs);
    // and the counts of records applied (a replay skips the block records of blocks superseded before its end).
    const comparable = (state: ViewState) =>
      JSON.stringify(
        {
          ...state,
          seq: 0,
          change: null,
          applied: 0,
          invalid: 0,
          lastInvalid: null,
          offsets: Object.fromEntries(Object.entries(state.offsets).sort()),
        },
        (_, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value),
      );
    try {
      await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1 })));
      await produceBlocks(100n, 30n);
      const { result: first, started } = await watchWorkers(async () => {
        const view = await materialize(testContext(), { log, snapshot, replayInWorkerFrom: 0 });
        const replay = await view.replayed;
        await view.close();
        return { replay, state: view.current() };
      });
      expect(started).toBe(1);
      expect(first.replay.fromSnapshot).toBe(false);
      expect(first.state.invalid).toBe(0);
      await produceBlocks(130n, 10n);
      const { result: views, started: startedOnResume } = await watchWorkers(async () => {
        const resumed = await materialize(testContext(), { log, snapshot, replayInWorkerFrom: 0 });
        const full = await materialize(testContext(), { log, replayInWorkerFrom: Number.POSITIVE_INFINITY });
        const replays = [await resumed.replayed, await full.replayed];
        const states = [resumed.current(), full.current()];
        await resumed.close();
        await full.close();
        return { replays, states };
      });
      // The resumed view read exactly the records after its snapshot (through a worker), the full one all.
      expect(startedOnResume).toBe(1);
      expect(views.replays[0]!.fromSnapshot).toBe(true);
      expect(views.replays[0]!.records).toBe(
        views.states[1]!.applied + views.replays[1]!.skipped - (first.state.applied + first.replay.skipped),
      );
      expect(comparable(views.states[0]!)).toEqual(comparable(views.states[1]!));
    } finally {
      await log.close();
      dir.remove();
    }
  }, 90_000);
});
