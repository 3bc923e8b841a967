import { EventEmitter } from 'node:events';
import { FlashlogError } from '../../errors.ts';
import { createEmbeddedAppender } from './append.ts';
import { createEmbeddedConsumer } from './consumer.ts';
import { openEmbeddedDb } from './db.ts';
import type { Log } from '../port.ts';

export interface EmbeddedLogOptions {
  /** SQLite file; `:memory:` for a throw-away log. */
  readonly path: string;
  /** How often a consumer looks for records appended by another process. */
  readonly pollIntervalMs?: number;
  /** Records per read. */
  readonly batchSize?: number;
}

/**
 * The embedded log: one SQLite file (WAL mode, db.ts), one partition per topic, readable
 * and writable by several processes on one machine. Consumers in the same process are woken at
 * once by a produce (append.ts); consumers in other processes poll (consumer.ts).
 */
export function createEmbeddedLog(options: EmbeddedLogOptions): Log {
  const store = openEmbeddedDb(options.path);
  const { statements } = store;
  const append = createEmbeddedAppender(store);
  const appended = new EventEmitter();
  appended.setMaxListeners(0);
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new FlashlogError('LOG_CLOSED', 'the embedded log is closed');
  };
  const consumerSettings = {
    pollIntervalMs: options.pollIntervalMs ?? 20,
    batchSize: options.batchSize ?? 2000,
    appended,
    logClosed: () => closed,
  };

  return {
    kind: 'embedded',

    async ensureTopics(specs) {
      assertOpen();
      for (const spec of specs) statements.createTopic.run(spec.name, spec.retentionMs ?? -1);
    },

    async produce(records) {
      assertOpen();
      if (records.length === 0) return [];
      const positions = append(records);
      for (const topic of new Set(records.map((record) => record.topic))) appended.emit(topic);
      return positions;
    },

    consumer(consume) {
      assertOpen();
      // replayInWorker is ignored here: a worker reading the file through its own connection was
      // measured (200,007 records, the replay bench's records) and spared the main thread no CPU
      // (2.10-2.41 s against 2.19-2.37 s): each value's string is still made on the main thread, and
      // handing the batches over cost what SQLite's reads had; the process used 1.3-1.4x the CPU.
      return createEmbeddedConsumer(store, consume, consumerSettings);
    },

    async listTopics() {
      assertOpen();
      return (statements.listTopics.all() as { name: string }[]).map((row) => row.name);
    },

    async identity() {
      return `embedded:${store.logId}`;
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
      store.db.close();
    },
  };
}
