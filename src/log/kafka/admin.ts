import type { Kafka } from 'kafkajs';
import { lazyConnection } from './client.ts';
import type { RecordPosition, TopicSpec } from '../port.ts';

/** Largest record batch the topics flashlog creates accept (and consumers fetch per partition). */
export const maxRecordBytes = 8 * 1024 * 1024;

export interface TopicDefaults {
  readonly partitions?: number;
  readonly replication?: number;
  readonly retentionMs?: number;
}

export interface KafkaAdmin {
  ensureTopics(specs: readonly TopicSpec[]): Promise<void>;
  listTopics(): Promise<string[]>;
  identity(): Promise<string>;
  endOffsets(topic: string): Promise<RecordPosition[]>;
  close(): Promise<void>;
}

/** The log's topics and offsets, through one admin client connected on first use. */
export function createKafkaAdmin(kafka: Kafka, defaults: TopicDefaults): KafkaAdmin {
  const admin = lazyConnection(() => kafka.admin());
  return {
    async ensureTopics(specs) {
      const client = await admin.get();
      const existing = new Set(await client.listTopics());
      const missing = specs.filter((spec) => !existing.has(spec.name));
      if (missing.length === 0) return;
      try {
        await client.createTopics({
          waitForLeaders: true,
          topics: missing.map((spec) => ({
            topic: spec.name,
            numPartitions: spec.partitions ?? defaults.partitions ?? 1,
            replicationFactor: spec.replication ?? defaults.replication ?? 1,
            configEntries: [
              { name: 'retention.ms', value: String(spec.retentionMs ?? defaults.retentionMs ?? -1) },
              // A block record of a large block (all its transactions, its state diff) can pass the
              // broker's 1 MiB default; consumers fetch up to 8 MiB per partition.
              { name: 'max.message.bytes', value: String(maxRecordBytes) },
            ],
          })),
        });
      } catch (error) {
        // Another process may have created them between listTopics and createTopics.
        const now = new Set(await client.listTopics());
        if (missing.some((spec) => !now.has(spec.name))) throw error;
      }
    },
    async listTopics() {
      const client = await admin.get();
      return (await client.listTopics()).filter((name) => !name.startsWith('__')).sort();
    },
    async identity() {
      const client = await admin.get();
      return `kafka:${(await client.describeCluster()).clusterId}`;
    },
    async endOffsets(topic) {
      const client = await admin.get();
      // Just after a topic is created (here or by another process) its partitions may have no
      // leader the broker knows of yet: kafkajs throws that retriable error at once.
      for (let attempt = 1; ; attempt++) {
        try {
          const offsets = await client.fetchTopicOffsets(topic);
          return offsets.map((offset) => ({ topic, partition: offset.partition, offset: BigInt(offset.high) }));
        } catch (error) {
          if (attempt >= 20 || (error as { retriable?: unknown }).retriable !== true) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100 * Math.min(attempt, 5)));
        }
      }
    },
    async close() {
      await (await admin.forget())?.disconnect().catch(() => undefined);
    },
  };
}
