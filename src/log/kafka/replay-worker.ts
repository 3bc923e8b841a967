/**
 * Worker-thread entry (started by kafka.ts as a worker; only its types are imported): reads the records
 * present on the topics when it starts (from the given offsets, else the earliest) with its own
 * kafkajs consumer, decodes them here, on the second core, and posts each fetched batch to the main
 * thread as one ReplayBatch (replay-batch.ts). Once every partition has reached the end offset it had
 * at the start, it posts the next offset of each partition (`done`) and stops: the main thread
 * follows the log from there with an in-thread consumer. At most `windowBatches` batches are in flight
 * unacknowledged (the main thread acknowledges each one it has delivered, with its buffer), so memory stays bounded.
 */
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { createKafkaClient } from './client.ts';
import { createBufferPool, encodeReplayBatch, type ReplayAck, type ReplayMessage } from './replay-batch.ts';

export interface KafkaReplayWorkerData {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly topics: readonly string[];
  /** Start offsets (decimal strings) per topic and partition; the others start at their earliest. */
  readonly seek: readonly { topic: string; partition: number; offset: string }[];
  readonly maxWaitMs: number;
  readonly maxBytesPerPartition: number;
  readonly windowBatches: number;
}

const port = parentPort!;
const empty = new Uint8Array(0);
const data = workerData as KafkaReplayWorkerData;
const post = (message: ReplayMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

let inFlight = 0;
let resumeReader: (() => void) | undefined;
const pool = createBufferPool(data.windowBatches);
port.on('message', (message: ReplayAck) => {
  pool.give(message.buffer);
  inFlight--;
  if (inFlight < data.windowBatches && resumeReader) {
    const resume = resumeReader;
    resumeReader = undefined;
    resume();
  }
});

async function replay(): Promise<void> {
  const kafka = createKafkaClient(data);
  const admin = kafka.admin();
  await admin.connect();
  // Where each partition starts and where the replay ends: the end offsets now.
  const next = new Map<string, { topic: string; partition: number; offset: bigint; end: bigint }>();
  for (const topic of data.topics) {
    for (const { partition, low, high } of await admin.fetchTopicOffsets(topic)) {
      const sought = data.seek.find((position) => position.topic === topic && position.partition === partition);
      next.set(`${topic}/${partition}`, { topic, partition, offset: BigInt(sought?.offset ?? low), end: BigInt(high) });
    }
  }
  await admin.disconnect();
  const behind = () => [...next.values()].some((position) => position.offset < position.end);
  const positions = () => [...next.values()].map(({ topic, partition, offset }) => ({ topic, partition, offset: offset.toString() }));
  if (!behind()) {
    post({ type: 'done', positions: positions() });
    return;
  }
  const consumer = kafka.consumer({
    groupId: `${data.clientId}-replay-${randomUUID()}`,
    maxWaitTimeInMs: data.maxWaitMs,
    maxBytesPerPartition: data.maxBytesPerPartition,
  });
  let finished = false;
  const done = new Promise<void>((resolve, reject) => {
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart) reject(event.payload.error);
    });
    void (async () => {
      await consumer.connect();
      await consumer.subscribe({ topics: [...data.topics], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          const position = next.get(`${batch.topic}/${batch.partition}`);
          if (finished || position === undefined) return;
          // Never a record before the partition's position (delivered once, in order).
          const from = position.offset;
          const messages = batch.messages.filter((message) => BigInt(message.offset) >= from);
          if (messages.length === 0) return;
          const records = messages.map((message) => ({
            offset: BigInt(message.offset),
            key: message.key,
            value: message.value ?? empty,
            timestamp: Number(message.timestamp),
          }));
          const { batch: encoded, transfer } = encodeReplayBatch(batch.topic, batch.partition, records, pool);
          inFlight++;
          post(encoded, transfer);
          position.offset = records[records.length - 1]!.offset + 1n;
          if (!behind()) {
            finished = true;
            resolve();
            return;
          }
          if (inFlight >= data.windowBatches) await new Promise<void>((resume) => (resumeReader = resume));
        },
      });
      for (const { topic, partition, offset } of next.values()) consumer.seek({ topic, partition, offset: offset.toString() });
    })().catch(reject);
  });
  try {
    await done;
    post({ type: 'done', positions: positions() });
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}

replay()
  .catch((error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }))
  // Nothing is left to wait for (the main thread's acknowledgements included): let the thread end.
  .finally(() => port.unref());
