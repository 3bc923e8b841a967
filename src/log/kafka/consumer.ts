import { randomUUID } from 'node:crypto';
import type { Consumer as KafkaConsumer, Kafka, KafkaMessage } from 'kafkajs';
import { Observable } from 'rxjs';
import type { Logger } from '../../obs/logger.ts';
import { maxRecordBytes } from './admin.ts';
import { createBatchQueue, type BatchQueue } from '../batch-queue.ts';
import type { ConsumeOptions, LogConsumer, LogRecord, RecordPosition } from '../port.ts';

export interface KafkaConsumerSettings {
  readonly clientId: string;
  readonly logger?: Logger;
  /** Longest wait of a fetch with no data; low keeps latency low. */
  readonly maxWaitMs: number;
}

/**
 * A kafkajs consumer as a LogConsumer: a consumer group (a random, ephemeral one unless given)
 * with manual commits. kafkajs fetches the next batches only once eachBatch has returned, so
 * eachBatch hands each batch to a queue and returns: the broker serves the next fetch while the
 * subscriber applies this one (a replay otherwise waited for every fetch). The queue holds a
 * bounded number of records, beyond which eachBatch waits for the subscriber.
 */
export function createKafkaConsumer(
  kafka: Kafka,
  consume: ConsumeOptions,
  settings: KafkaConsumerSettings,
  /** The log's open consumers (closed with it): this one is in it until it closes. */
  open: Set<KafkaConsumer>,
): LogConsumer {
  const { logger } = settings;
  const groupId = consume.group ?? `${settings.clientId}-reader-${randomUUID()}`;
  const client = kafka.consumer({
    groupId,
    sessionTimeout: 30_000,
    heartbeatInterval: 3000,
    maxWaitTimeInMs: settings.maxWaitMs,
    maxBytesPerPartition: maxRecordBytes,
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: Number.MAX_SAFE_INTEGER },
  });
  open.add(client);
  let stop: (() => void) | undefined;
  // Backpressure (LogConsumer.pause): kafkajs stops fetching the paused topics (consumer.pause, which
  // it accepts only once run() has begun: a pause before that is applied then), and the queue holds
  // what was fetched already. kafkajs 2.2.4 src/consumer/index.js (pause/resume) and
  // src/consumer/runner.js (a paused partition's fetched batch is not handed to eachBatch).
  let paused = false;
  let running = false;
  let queued: BatchQueue<LogRecord> | undefined;
  const topicsOf = () => consume.topics.map((topic) => ({ topic }));
  const records$ = new Observable<LogRecord>((subscriber) => {
    let done = false;
    const queue = createBatchQueue<LogRecord>((record) => subscriber.next(record));
    queued = queue;
    if (paused) queue.pause();
    (async () => {
      await client.connect();
      await client.subscribe({ topics: [...consume.topics], fromBeginning: (consume.from ?? 'earliest') === 'earliest' });
      await client.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch }) => {
          if (done) return;
          await queue.push(batch.messages.map((message) => toRecord(batch.topic, batch.partition, message)));
        },
      });
      running = true;
      if (paused) client.pause(topicsOf());
      for (const position of consume.seek ?? []) {
        client.seek({ topic: position.topic, partition: position.partition, offset: position.offset.toString() });
      }
    })().catch((error: unknown) => {
      if (!done) subscriber.error(error);
    });
    client.on(client.events.CRASH, (event) => {
      logger?.warn({ err: event.payload.error, group: groupId, restart: event.payload.restart }, 'kafka consumer crashed');
      if (!event.payload.restart && !done) subscriber.error(event.payload.error);
    });
    stop = () => subscriber.complete();
    return () => {
      done = true;
      queue.clear();
    };
  });
  return {
    records$,
    async commit(positions: readonly RecordPosition[]) {
      if (consume.group === undefined || positions.length === 0) return;
      await client.commitOffsets(
        positions.map((position) => ({ topic: position.topic, partition: position.partition, offset: position.offset.toString() })),
      );
    },
    pause() {
      if (paused) return;
      paused = true;
      if (running) client.pause(topicsOf());
      queued?.pause();
    },
    resume() {
      if (!paused) return;
      paused = false;
      if (running) client.resume(topicsOf());
      queued?.resume();
    },
    async close() {
      stop?.();
      open.delete(client);
      await client.disconnect().catch(() => undefined);
    },
  };
}

function toRecord(topic: string, partition: number, message: KafkaMessage): LogRecord {
  return {
    topic,
    partition,
    offset: BigInt(message.offset),
    key: message.key === null ? null : message.key.toString('utf8'),
    value: message.value === null ? '' : message.value.toString('utf8'),
    timestamp: Number(message.timestamp),
  };
}
