import { FlashlogError } from '../../errors.ts';
import type { EmbeddedDb } from './db.ts';
import type { ProduceRecord, RecordPosition } from '../port.ts';

/**
 * The embedded log's writer. It is an invariant that offsets of a topic are dense and increasing
 * from 0: they are assigned inside the write transaction that appends the records. Records past
 * their topic's retention are deleted by the append that finds them (at most once a minute).
 */
export function createEmbeddedAppender(store: EmbeddedDb): (records: readonly ProduceRecord[]) => RecordPosition[] {
  const { statements } = store;
  let lastExpiry = 0;
  function expire(now: number): void {
    if (now - lastExpiry < 60_000) return;
    lastExpiry = now;
    for (const row of statements.listTopics.all() as { name: string }[]) {
      const info = statements.topic.get(row.name) as { retention_ms: bigint };
      if (info.retention_ms >= 0n) statements.expire.run(row.name, now - Number(info.retention_ms));
    }
  }
  return (records) => {
    const now = Date.now();
    const counts = new Map<string, number>();
    for (const record of records) counts.set(record.topic, (counts.get(record.topic) ?? 0) + 1);
    return store.write(() => {
      const positions: RecordPosition[] = [];
      const next = new Map<string, bigint>();
      for (const [topic, count] of counts) {
        if (statements.topic.get(topic) === undefined)
          throw new FlashlogError('LOG_UNKNOWN_TOPIC', `topic ${topic} does not exist; create it first`);
        const row = statements.bumpOffset.get(count, topic) as { next_offset: bigint };
        next.set(topic, row.next_offset - BigInt(count));
      }
      for (const record of records) {
        const offset = next.get(record.topic)!;
        next.set(record.topic, offset + 1n);
        statements.insert.run(record.topic, offset, record.key, record.value, now);
        positions.push({ topic: record.topic, partition: 0, offset });
      }
      expire(now);
      return positions;
    });
  };
}
