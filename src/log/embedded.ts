import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EventEmitter } from 'node:events';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { Observable } from 'rxjs';
import { FlashlogError } from '../errors.ts';
import type { ConsumeOptions, Log, LogConsumer, LogRecord, ProduceRecord, RecordPosition, TopicSpec } from './port.ts';

export interface EmbeddedLogOptions {
  /** SQLite file; `:memory:` for a throw-away log. */
  readonly path: string;
  /** How often a consumer looks for records appended by another process. */
  readonly pollIntervalMs?: number;
  /** Records per read. */
  readonly batchSize?: number;
}

/**
 * The embedded log: one SQLite file (WAL mode), one partition per topic, readable and writable by
 * several processes on one machine. Consumers in the same process are woken at once by a produce;
 * consumers in other processes poll.
 *
 * It is an invariant that offsets of a topic are dense and increasing from 0: they are assigned
 * inside the write transaction that appends the records.
 */
/**
 * Reads go through a memory map of the file (up to SQLite's own cap, 2 GiB in the usual build):
 * a block record spans several overflow pages, and copying each page through read() made reading
 * the log about 3x slower than mapping it (a full replay reads every record).
 */
const mmapBytes = 2 ** 31;

export function createEmbeddedLog(options: EmbeddedLogOptions): Log {
  if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
  const db = new DatabaseSync(options.path);
  // busy_timeout first: a second process opening the same file (serve beside run) must wait for
  // the writer's lock in every statement that follows, the journal-mode switch included.
  db.exec(`
    PRAGMA busy_timeout = 10000;
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA mmap_size = ${mmapBytes};
    CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, retention_ms INTEGER NOT NULL, next_offset INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS records (topic TEXT NOT NULL, offset INTEGER NOT NULL, key TEXT, value TEXT NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (topic, offset)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS commits (grp TEXT NOT NULL, topic TEXT NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY (grp, topic)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  `);
  const readLogId = () => (db.prepare("SELECT value FROM meta WHERE key = 'log_id'").get() as { value: string } | undefined)?.value;
  // Only the first opener writes the id; a reader of an existing log takes no write lock for it.
  if (readLogId() === undefined) db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('log_id', ?)").run(randomUUID());
  const logId = readLogId()!;
  const pollIntervalMs = options.pollIntervalMs ?? 20;
  const batchSize = options.batchSize ?? 2000;
  const appended = new EventEmitter();
  appended.setMaxListeners(0);
  let closed = false;

  const statements = {
    topic: db.prepare('SELECT name, next_offset, retention_ms FROM topics WHERE name = ?'),
    createTopic: db.prepare('INSERT OR IGNORE INTO topics (name, retention_ms) VALUES (?, ?)'),
    listTopics: db.prepare('SELECT name FROM topics ORDER BY name'),
    bumpOffset: db.prepare('UPDATE topics SET next_offset = next_offset + ? WHERE name = ? RETURNING next_offset'),
    insert: db.prepare('INSERT INTO records (topic, offset, key, value, ts) VALUES (?, ?, ?, ?, ?)'),
    read: db.prepare('SELECT offset, key, value, ts FROM records WHERE topic = ? AND offset >= ? ORDER BY offset LIMIT ?'),
    firstOffset: db.prepare('SELECT MIN(offset) AS first FROM records WHERE topic = ?'),
    committed: db.prepare('SELECT offset FROM commits WHERE grp = ? AND topic = ?'),
    commit: db.prepare(
      'INSERT INTO commits (grp, topic, offset) VALUES (?, ?, ?) ON CONFLICT (grp, topic) DO UPDATE SET offset = excluded.offset',
    ),
    expire: db.prepare('DELETE FROM records WHERE topic = ? AND ts < ?'),
  } satisfies Record<string, StatementSync>;
  for (const statement of Object.values(statements)) statement.setReadBigInts(true);
  // Rows as arrays: a replay reads every record, and a row object per record cost more than the read.
  statements.read.setReturnArrays(true);
  let lastExpiry = 0;

  const assertOpen = () => {
    if (closed) throw new FlashlogError('LOG_CLOSED', 'the embedded log is closed');
  };
  const topicExists = (topic: string) => statements.topic.get(topic) !== undefined;

  function expire(now: number): void {
    if (now - lastExpiry < 60_000) return;
    lastExpiry = now;
    for (const row of statements.listTopics.all() as { name: string }[]) {
      const info = statements.topic.get(row.name) as { retention_ms: bigint };
      if (info.retention_ms >= 0n) statements.expire.run(row.name, now - Number(info.retention_ms));
    }
  }

  return {
    kind: 'embedded',

    async ensureTopics(specs: readonly TopicSpec[]) {
      assertOpen();
      for (const spec of specs) statements.createTopic.run(spec.name, spec.retentionMs ?? -1);
    },

    async produce(records: readonly ProduceRecord[]) {
      assertOpen();
      if (records.length === 0) return [];
      const now = Date.now();
      const counts = new Map<string, number>();
      for (const record of records) counts.set(record.topic, (counts.get(record.topic) ?? 0) + 1);
      const positions: RecordPosition[] = [];
      db.exec('BEGIN IMMEDIATE');
      try {
        const next = new Map<string, bigint>();
        for (const [topic, count] of counts) {
          if (!topicExists(topic)) throw new FlashlogError('LOG_UNKNOWN_TOPIC', `topic ${topic} does not exist; create it first`);
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
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
      for (const topic of counts.keys()) appended.emit(topic);
      return positions;
    },

    consumer(consume: ConsumeOptions): LogConsumer {
      assertOpen();
      const group = consume.group;
      let stop: (() => void) | undefined;
      let consumerClosed = false;
      const records$ = new Observable<LogRecord>((subscriber) => {
        const positions = new Map<string, bigint>();
        for (const topic of consume.topics) {
          const row = statements.topic.get(topic) as { next_offset: bigint } | undefined;
          if (!row) {
            subscriber.error(new FlashlogError('LOG_UNKNOWN_TOPIC', `topic ${topic} does not exist`));
            return;
          }
          const sought = consume.seek?.find((position) => position.topic === topic);
          const committed = group === undefined ? undefined : (statements.committed.get(group, topic) as { offset: bigint } | undefined);
          const start =
            sought?.offset ??
            committed?.offset ??
            (consume.from === 'latest' ? row.next_offset : ((statements.firstOffset.get(topic) as { first: bigint | null }).first ?? 0n));
          positions.set(topic, start);
        }
        let timer: NodeJS.Timeout | undefined;
        let draining = false;
        const drain = () => {
          if (draining || subscriber.closed || closed) return;
          draining = true;
          try {
            let more = true;
            while (more && !subscriber.closed) {
              more = false;
              for (const [topic, from] of positions) {
                const rows = statements.read.all(topic, from, batchSize) as unknown as [
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
                if (rows.length === batchSize) more = true;
              }
            }
          } catch (error) {
            subscriber.error(error);
          } finally {
            draining = false;
          }
        };
        const wake = () => setImmediate(drain);
        for (const topic of consume.topics) appended.on(topic, wake);
        const poll = () => {
          drain();
          if (!subscriber.closed && !closed) timer = setTimeout(poll, pollIntervalMs);
        };
        poll();
        stop = () => subscriber.complete();
        return () => {
          if (timer) clearTimeout(timer);
          for (const topic of consume.topics) appended.off(topic, wake);
        };
      });
      return {
        records$,
        async commit(positions) {
          if (group === undefined || consumerClosed || closed) return;
          db.exec('BEGIN IMMEDIATE');
          try {
            for (const position of positions) statements.commit.run(group, position.topic, position.offset);
            db.exec('COMMIT');
          } catch (error) {
            db.exec('ROLLBACK');
            throw error;
          }
        },
        async close() {
          consumerClosed = true;
          stop?.();
        },
      };
    },

    async listTopics() {
      assertOpen();
      return (statements.listTopics.all() as { name: string }[]).map((row) => row.name);
    },

    async identity() {
      return `embedded:${logId}`;
    },

    async endOffsets(topic) {
      assertOpen();
      const row = statements.topic.get(topic) as { next_offset: bigint } | undefined;
      if (!row) throw new FlashlogError('LOG_UNKNOWN_TOPIC', `topic ${topic} does not exist`);
      return [{ topic, partition: 0, offset: row.next_offset }];
    },

    async close() {
      if (closed) return;
      closed = true;
      appended.removeAllListeners();
      db.close();
    },
  };
}
