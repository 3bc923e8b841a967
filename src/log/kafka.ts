import { randomUUID } from 'node:crypto';
import { Kafka, logLevel as kafkaLogLevel, type Admin, type Producer, type Consumer as KafkaConsumer, type LogEntry } from 'kafkajs';
import { Observable } from 'rxjs';
import { FlashlogError, errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import type { ConsumeOptions, Log, LogConsumer, LogRecord, ProduceRecord, RecordPosition, TopicSpec } from './port.ts';

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
 * The Kafka log (kafkajs): an idempotent producer (acks=all, one request in flight, so a retry
 * can't reorder or duplicate), consumer groups with manual commits, topics created on demand.
 */
/** Largest record batch the topics flashlog creates accept (and consumers fetch per partition). */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;

/** Errors after which an idempotent producer can never succeed again (kafkajs error types). */
const idempotenceLost =
  /OUT_OF_ORDER_SEQUENCE_NUMBER|UNKNOWN_PRODUCER_ID|INVALID_PRODUCER_EPOCH|out of order sequence|unknown producer|producer.*(epoch|fenced)/i;

function brokeIdempotence(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const { type, message, cause, originalError } = error as { type?: unknown; message?: unknown; cause?: unknown; originalError?: unknown };
  if (idempotenceLost.test(`${String(type ?? '')} ${String(message ?? '')}`)) return true;
  return brokeIdempotence(cause, depth + 1) || brokeIdempotence(originalError, depth + 1);
}

export function createKafkaLog(options: KafkaLogOptions): Log {
  const logger = options.logger;
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: 8 },
    logLevel: kafkaLogLevel.WARN,
    logCreator:
      () =>
      ({ namespace, level, log }: LogEntry) => {
        const { message, ...rest } = log;
        if (level <= kafkaLogLevel.ERROR) logger?.warn({ kafka: namespace, ...rest }, message);
        else logger?.debug({ kafka: namespace, ...rest }, message);
      },
  });
  let admin: Promise<Admin> | undefined;
  let producer: Promise<Producer> | undefined;
  const consumers = new Set<KafkaConsumer>();
  let closed = false;

  const connectedAdmin = () => {
    admin ??= (async () => {
      const client = kafka.admin();
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      admin = undefined;
      throw error;
    });
    return admin;
  };
  const connectedProducer = () => {
    producer ??= (async () => {
      const client = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await client.connect();
      return client;
    })().catch((error: unknown) => {
      producer = undefined;
      throw error;
    });
    return producer;
  };

  return {
    kind: 'kafka',

    async ensureTopics(specs: readonly TopicSpec[]) {
      const client = await connectedAdmin();
      const existing = new Set(await client.listTopics());
      const missing = specs.filter((spec) => !existing.has(spec.name));
      if (missing.length === 0) return;
      try {
        await client.createTopics({
          waitForLeaders: true,
          topics: missing.map((spec) => ({
            topic: spec.name,
            numPartitions: spec.partitions ?? options.partitions ?? 1,
            replicationFactor: spec.replication ?? options.replication ?? 1,
            configEntries: [
              { name: 'retention.ms', value: String(spec.retentionMs ?? options.retentionMs ?? -1) },
              // A block record of a large block (all its transactions, its state diff) can pass the
              // broker's 1 MiB default; consumers fetch up to 8 MiB per partition.
              { name: 'max.message.bytes', value: String(MAX_RECORD_BYTES) },
            ],
          })),
        });
      } catch (error) {
        // Another process may have created them between listTopics and createTopics.
        const now = new Set(await client.listTopics());
        if (missing.some((spec) => !now.has(spec.name))) throw error;
      }
    },

    async produce(records: readonly ProduceRecord[]) {
      if (closed) throw new FlashlogError('LOG_CLOSED', 'the kafka log is closed');
      if (records.length === 0) return [];
      const client = await connectedProducer();
      const byTopic = new Map<string, { key: string | null; value: string }[]>();
      for (const record of records) {
        let list = byTopic.get(record.topic);
        if (!list) byTopic.set(record.topic, (list = []));
        list.push({ key: record.key, value: record.value });
      }
      let results: Awaited<ReturnType<Producer['sendBatch']>>;
      try {
        results = await client.sendBatch({
          acks: -1,
          topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
        });
      } catch (error) {
        if (brokeIdempotence(error)) {
          // The broker lost this producer's sequence state (e.g. it was killed and restarted):
          // every retry with the same producer id fails forever. A new producer (new id) goes on;
          // a batch the broker had written but never acknowledged may then appear twice, which a
          // reader deduplicating by key drops.
          logger?.warn({ err: errorMessage(error) }, 'kafka producer state lost at the broker; starting a new producer');
          const stale = producer;
          producer = undefined;
          void stale?.then((old) => old.disconnect()).catch(() => undefined);
        }
        throw error;
      }
      // Kafka reports the base offset per partition written; name the last record of each.
      return results.map((result) => {
        const written = byTopic.get(result.topicName)!.length;
        return { topic: result.topicName, partition: result.partition, offset: BigInt(result.baseOffset ?? '0') + BigInt(written) - 1n };
      });
    },

    consumer(consume: ConsumeOptions): LogConsumer {
      const groupId = consume.group ?? `${options.clientId}-reader-${randomUUID()}`;
      const client = kafka.consumer({
        groupId,
        sessionTimeout: 30_000,
        heartbeatInterval: 3000,
        maxWaitTimeInMs: options.maxWaitMs ?? 100,
        maxBytesPerPartition: MAX_RECORD_BYTES,
        retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: Number.MAX_SAFE_INTEGER },
      });
      consumers.add(client);
      let stop: (() => void) | undefined;
      const records$ = new Observable<LogRecord>((subscriber) => {
        let done = false;
        (async () => {
          await client.connect();
          await client.subscribe({ topics: [...consume.topics], fromBeginning: (consume.from ?? 'earliest') === 'earliest' });
          await client.run({
            autoCommit: false,
            eachBatchAutoResolve: true,
            eachBatch: async ({ batch }) => {
              for (const message of batch.messages) {
                if (done) return;
                subscriber.next({
                  topic: batch.topic,
                  partition: batch.partition,
                  offset: BigInt(message.offset),
                  key: message.key === null ? null : message.key.toString('utf8'),
                  value: message.value === null ? '' : message.value.toString('utf8'),
                  timestamp: Number(message.timestamp),
                });
              }
            },
          });
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
        };
      });
      return {
        records$,
        async commit(positions: readonly RecordPosition[]) {
          if (consume.group === undefined || positions.length === 0) return;
          await client.commitOffsets(
            positions.map((position) => ({
              topic: position.topic,
              partition: position.partition,
              offset: position.offset.toString(),
            })),
          );
        },
        async close() {
          stop?.();
          consumers.delete(client);
          await client.disconnect().catch(() => undefined);
        },
      };
    },

    async listTopics() {
      const client = await connectedAdmin();
      return (await client.listTopics()).filter((name) => !name.startsWith('__')).sort();
    },

    async identity() {
      const client = await connectedAdmin();
      return `kafka:${(await client.describeCluster()).clusterId}`;
    },

    async endOffsets(topic: string) {
      const client = await connectedAdmin();
      const offsets = await client.fetchTopicOffsets(topic);
      return offsets.map((offset) => ({ topic, partition: offset.partition, offset: BigInt(offset.high) }));
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...consumers].map((client) => client.disconnect().catch(() => undefined)));
      if (producer) await (await producer.catch(() => undefined))?.disconnect().catch(() => undefined);
      if (admin) await (await admin.catch(() => undefined))?.disconnect().catch(() => undefined);
    },
  };
}
