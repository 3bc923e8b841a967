import type { EventEmitter } from 'node:events';
import { Observable } from 'rxjs';
import { FlashlogError } from '../../errors.ts';
import type { EmbeddedDb } from './db.ts';
import type { ConsumeOptions, LogConsumer, LogRecord } from '../port.ts';

export interface EmbeddedConsumerSettings {
  /** How often the consumer looks for records appended by another process. */
  readonly pollIntervalMs: number;
  /** Records per read. */
  readonly batchSize: number;
  /** Emits a topic's name when this process appended to it (wakes the consumer at once). */
  readonly appended: EventEmitter;
  readonly logClosed: () => boolean;
}

/** A reader of the embedded log: reads every topic from its start position, then polls and wakes on appends. */
export function createEmbeddedConsumer(store: EmbeddedDb, consume: ConsumeOptions, settings: EmbeddedConsumerSettings): LogConsumer {
  const { statements } = store;
  const { group } = consume;
  let stop: (() => void) | undefined;
  let consumerClosed = false;
  const records$ = new Observable<LogRecord>((subscriber) => {
    const positions = new Map<string, bigint>();
    for (const topic of consume.topics) {
      const start = startOffset(store, consume, topic);
      if (start === undefined) {
        subscriber.error(new FlashlogError('LOG_UNKNOWN_TOPIC', `topic ${topic} does not exist`));
        return;
      }
      positions.set(topic, start);
    }
    let timer: NodeJS.Timeout | undefined;
    let draining = false;
    const drain = () => {
      if (draining || subscriber.closed || settings.logClosed()) return;
      draining = true;
      // A full batch means a backlog: read the rest of it through the file's memory map, and drop
      // the map once caught up (db.ts says why). The drain is synchronous, so one flag
      // per log is enough: no other consumer reads while this one drains.
      let backlog = false;
      try {
        let more = true;
        while (more && !subscriber.closed) {
          more = false;
          for (const [topic, from] of positions) {
            const rows = statements.read.all(topic, from, settings.batchSize) as unknown as [
              offset: bigint,
              key: string | null,
              value: string,
              ts: bigint,
            ][];
            for (const [offset, key, value, ts] of rows) {
              if (subscriber.closed) return;
              positions.set(topic, offset + 1n);
              subscriber.next({ topic, partition: 0, offset, key, value, timestamp: Number(ts) });
            }
            if (rows.length === settings.batchSize) {
              more = true;
              if (!backlog) {
                backlog = true;
                store.mapReads(true);
              }
            }
          }
        }
      } catch (error) {
        subscriber.error(error);
      } finally {
        draining = false;
        if (backlog) store.mapReads(false);
      }
    };
    const wake = () => setImmediate(drain);
    for (const topic of consume.topics) settings.appended.on(topic, wake);
    const poll = () => {
      drain();
      if (!subscriber.closed && !settings.logClosed()) timer = setTimeout(poll, settings.pollIntervalMs);
    };
    poll();
    stop = () => subscriber.complete();
    return () => {
      if (timer) clearTimeout(timer);
      for (const topic of consume.topics) settings.appended.off(topic, wake);
    };
  });
  return {
    records$,
    async commit(positions) {
      if (group === undefined || consumerClosed || settings.logClosed()) return;
      store.write(() => {
        for (const position of positions) statements.commit.run(group, position.topic, position.offset);
      });
    },
    async close() {
      consumerClosed = true;
      stop?.();
    },
  };
}

/** Where a reader starts on `topic`: a sought offset, else the group's commit, else the first or next offset; undefined for no such topic. */
function startOffset(store: EmbeddedDb, consume: ConsumeOptions, topic: string): bigint | undefined {
  const { statements } = store;
  const row = statements.topic.get(topic) as { next_offset: bigint } | undefined;
  if (!row) return undefined;
  const sought = consume.seek?.find((position) => position.topic === topic);
  const committed =
    consume.group === undefined ? undefined : (statements.committed.get(consume.group, topic) as { offset: bigint } | undefined);
  return (
    sought?.offset ??
    committed?.offset ??
    (consume.from === 'latest' ? row.next_offset : ((statements.firstOffset.get(topic) as { first: bigint | null }).first ?? 0n))
  );
}
