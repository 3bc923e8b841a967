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
  // Backpressure (LogConsumer.pause): the drain stops before the next record and reads on from it.
  let paused = false;
  let wakeUp: (() => void) | undefined;
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
    // The rest of a read that a pause cut short: delivered first on resume, so a paused reader
    // holds at most one read (batchSize rows) and never reads the same rows twice.
    let held: { topic: string; rows: Row[]; next: number } | undefined;
    /** Delivers rows from `start` until done or paused; the index of the first row not delivered. */
    const deliver = (topic: string, rows: Row[], start: number): number => {
      for (let index = start; index < rows.length; index++) {
        if (subscriber.closed || paused) return index;
        const [offset, key, value, ts] = rows[index]!;
        positions.set(topic, offset + 1n);
        subscriber.next({ topic, partition: 0, offset, key, value, timestamp: Number(ts) });
      }
      return rows.length;
    };
    const drain = () => {
      if (draining || paused || subscriber.closed || settings.logClosed()) return;
      draining = true;
      // A full batch means a backlog: read the rest of it through the file's memory map, and drop
      // the map once caught up (db.ts says why). The drain is synchronous, so one flag
      // per log is enough: no other consumer reads while this one drains.
      let backlog = false;
      try {
        if (held) {
          const { topic, rows } = held;
          const next = deliver(topic, rows, held.next);
          held = next < rows.length ? { topic, rows, next } : undefined;
          if (held) return;
        }
        let more = true;
        while (more && !subscriber.closed && !paused) {
          more = false;
          for (const [topic, from] of positions) {
            const rows = statements.read.all(topic, from, settings.batchSize) as unknown as Row[];
            const next = deliver(topic, rows, 0);
            if (next < rows.length) {
              if (!subscriber.closed) held = { topic, rows, next };
              return;
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
    wakeUp = wake;
    for (const topic of consume.topics) settings.appended.on(topic, wake);
    const poll = () => {
      drain();
      if (!subscriber.closed && !settings.logClosed()) timer = setTimeout(poll, settings.pollIntervalMs);
    };
    poll();
    stop = () => subscriber.complete();
    return () => {
      wakeUp = undefined;
      held = undefined;
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
    pause() {
      paused = true;
    },
    resume() {
      if (!paused) return;
      paused = false;
      wakeUp?.();
    },
    async close() {
      consumerClosed = true;
      stop?.();
    },
  };
}

/** A row of the read statement (db.ts). */
type Row = [offset: bigint, key: string | null, value: string, ts: bigint];

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
