import { randomUUID } from 'node:crypto';
import { Kafka, logLevel as kafkaLogLevel, type Admin, type Producer, type Consumer as KafkaConsumer, type LogEntry } from 'kafkajs';
import { Observable } from 'rxjs';
import { FlashlogError } from '../errors.ts';
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
export function createKafkaLog(options: KafkaLogOptions): Log {
  const logger = options.logger;
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    requestTimeout: 30_000,
    retry: { initialRetryTime: 300, maxRetryTime: 5000, retries: 8 },
    logLevel: kafkaLogLevel.WARN,
    logCreator: () => ({ namespace, level, log }: LogEntry) => {
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
            configEntries: [{ name: 'retention.ms', value: String(spec.retentionMs ?? options.retentionMs ?? -1) }],
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
      const results = await client.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
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
        maxBytesPerPartition: 8 * 1024 * 1024,
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
          await client.commitOffsets(positions.map((position) => ({
            topic: position.topic,
            partition: position.partition,
            offset: position.offset.toString(),
          })));
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
