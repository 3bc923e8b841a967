import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { makeDirectory } from '../../config/paths.ts';

/**
 * A backlog is read through a memory map of the file (up to SQLite's own cap, 2 GiB in the usual
 * build): a block record spans several overflow pages, and copying each page through read() made
 * reading the log about 3x slower than mapping it (a full replay reads every record).
 *
 * Live reads (the newest records, a batch or less) go through read() instead, and the map is
 * dropped once a backlog is read: every page a mapped read touches stays in the process's resident
 * memory for as long as the map lives, so a `run` that kept the map grew its RSS with the log
 * (+12-19 MB/min at load 30, by the soak), where read() leaves those pages to the kernel's cache.
 */
const mmapBytes = 2 ** 31;

/** The embedded log's SQLite file: its tables, its prepared statements and the log's id. */
export interface EmbeddedDb {
  readonly db: DatabaseSync;
  readonly statements: EmbeddedStatements;
  /** Names this log (Log.identity): written once by the first process that opens the file. */
  readonly logId: string;
  /** Runs `work` in one write transaction (BEGIN IMMEDIATE: it waits for another writer's lock). */
  write<T>(work: () => T): T;
  /** Reads through a memory map of the file (true: a backlog) or through read() (false: live). */
  mapReads(on: boolean): void;
}

export type EmbeddedStatements = ReturnType<typeof prepare>;

export function openEmbeddedDb(path: string): EmbeddedDb {
  if (path !== ':memory:') makeDirectory(dirname(path));
  const db = new DatabaseSync(path);
  // busy_timeout first: a second process opening the same file (serve beside run) must wait for
  // the writer's lock in every statement that follows, the journal-mode switch included.
  db.exec(`
    PRAGMA busy_timeout = 10000;
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA mmap_size = 0;
    CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, retention_ms INTEGER NOT NULL, next_offset INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE IF NOT EXISTS records (topic TEXT NOT NULL, offset INTEGER NOT NULL, key TEXT, value TEXT NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (topic, offset)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS commits (grp TEXT NOT NULL, topic TEXT NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY (grp, topic)) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  `);
  const readLogId = () => (db.prepare("SELECT value FROM meta WHERE key = 'log_id'").get() as { value: string } | undefined)?.value;
  // Only the first opener writes the id; a reader of an existing log takes no write lock for it.
  if (readLogId() === undefined) db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('log_id', ?)").run(randomUUID());
  let mapped = false;
  return {
    db,
    statements: prepare(db),
    logId: readLogId()!,
    mapReads(on) {
      if (on === mapped) return;
      mapped = on;
      // A log closed during a drain (by the reader itself) has no map left to drop.
      if (!db.isOpen) return;
      db.exec(`PRAGMA mmap_size = ${on ? mmapBytes : 0}`);
    },
    write(work) {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = work();
        db.exec('COMMIT');
        return result;
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
  };
}

function prepare(db: DatabaseSync) {
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
  return statements;
}
