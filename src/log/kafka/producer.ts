import type { Kafka, Producer } from 'kafkajs';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import { lazyConnection } from './client.ts';
import type { ProduceRecord, RecordPosition } from '../port.ts';

/** Errors after which an idempotent producer can never succeed again (kafkajs error types). */
const idempotenceLost =
  /OUT_OF_ORDER_SEQUENCE_NUMBER|UNKNOWN_PRODUCER_ID|INVALID_PRODUCER_EPOCH|out of order sequence|unknown producer|producer.*(epoch|fenced)/i;

function brokeIdempotence(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const { type, message, cause, originalError } = error as { type?: unknown; message?: unknown; cause?: unknown; originalError?: unknown };
  if (idempotenceLost.test(`${String(type ?? '')} ${String(message ?? '')}`)) return true;
  return brokeIdempotence(cause, depth + 1) || brokeIdempotence(originalError, depth + 1);
}

export interface KafkaProducer {
  /** Appends records (acks=all); resolves with the position of the last record written per partition. */
  produce(records: readonly ProduceRecord[]): Promise<RecordPosition[]>;
  close(): Promise<void>;
}

/**
 * The log's writer: one idempotent producer (acks=all, one request in flight, so a retry can't
 * reorder or duplicate), replaced by a new one when the broker has lost its sequence state.
 */
export function createKafkaProducer(kafka: Kafka, logger?: Logger): KafkaProducer {
  const producer = lazyConnection(() => kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false }));
  return {
    async produce(records) {
      if (records.length === 0) return [];
      const client = await producer.get();
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
          void producer.forget()?.then((stale) => stale?.disconnect().catch(() => undefined));
        }
        throw error;
      }
      // Kafka reports the base offset per partition written; name the last record of each.
      return results.map((result) => {
        const written = byTopic.get(result.topicName)!.length;
        return { topic: result.topicName, partition: result.partition, offset: BigInt(result.baseOffset ?? '0') + BigInt(written) - 1n };
      });
    },
    async close() {
      await (await producer.forget())?.disconnect().catch(() => undefined);
    },
  };
}
