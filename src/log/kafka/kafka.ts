import type { Consumer as KafkaConsumer } from 'kafkajs';
import { Worker } from 'node:worker_threads';
import { FlashlogError } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import { createKafkaAdmin, maxRecordBytes } from './admin.ts';
import { createKafkaClient } from './client.ts';
import { createKafkaConsumer } from './consumer.ts';
import { createKafkaProducer } from './producer.ts';
import type { KafkaReplayWorkerData } from './replay-worker.ts';
import { createWorkerReplayConsumer } from './worker-replay.ts';
import type { ConsumeOptions, Log } from '../port.ts';

export interface KafkaLogOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly logger?: Logger;
  /** Defaults for topics created by ensureTopics. */
  readonly partitions?: number;
  readonly replication?: number;
  readonly retentionMs?: number;
  /** Longest wait of a fetch with no data; low keeps latency low. */
  readonly maxWaitMs?: number;
}

/**
 * The Kafka log (kafkajs): an idempotent producer (producer.ts), consumer groups with manual
 * commits (consumer.ts), topics created on demand (admin.ts).
 */
export function createKafkaLog(options: KafkaLogOptions): Log {
  const kafka = createKafkaClient(options);
  const admin = createKafkaAdmin(kafka, options);
  const producer = createKafkaProducer(kafka, options.logger);
  const consumers = new Set<KafkaConsumer>();
  const consumerSettings = {
    clientId: options.clientId,
    ...(options.logger ? { logger: options.logger } : {}),
    maxWaitMs: options.maxWaitMs ?? 100,
  };
  const workers = new Set<Worker>();
  let closed = false;
  return {
    kind: 'kafka',
    ensureTopics: (specs) => admin.ensureTopics(specs),
    async produce(records) {
      if (closed) throw new FlashlogError('LOG_CLOSED', 'the kafka log is closed');
      return producer.produce(records);
    },
    consumer(consume) {
      const inThread = (options: ConsumeOptions) => createKafkaConsumer(kafka, options, consumerSettings, consumers);
      if (!consume.replayInWorker || consume.group !== undefined || consume.from === 'latest') return inThread(consume);
      const workerData: KafkaReplayWorkerData = {
        brokers: options.brokers,
        clientId: options.clientId,
        topics: consume.topics,
        seek: (consume.seek ?? []).map(({ topic, partition, offset }) => ({ topic, partition, offset: offset.toString() })),
        maxWaitMs: consumerSettings.maxWaitMs,
        maxBytesPerPartition: maxRecordBytes,
        windowBatches: 4,
      };
      return createWorkerReplayConsumer(
        () => new Worker(new URL('./replay-worker.ts', import.meta.url), { workerData }),
        workers,
        (seek) => inThread({ topics: consume.topics, seek }),
        { seek: consume.seek ?? [], ...(options.logger ? { logger: options.logger } : {}), logClosed: () => closed },
      );
    },
    listTopics: () => admin.listTopics(),
    identity: () => admin.identity(),
    endOffsets: (topic) => admin.endOffsets(topic),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...workers].map((worker) => worker.terminate()));
      await Promise.all([...consumers].map((client) => client.disconnect().catch(() => undefined)));
      await producer.close();
      await admin.close();
    },
  };
}
