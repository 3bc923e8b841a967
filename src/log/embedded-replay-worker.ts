/**
 * Worker-thread entry (started by embedded.ts as a worker; only its types are imported): reads the
 * records present on the topics when it starts (from the given offsets, else each topic's first),
 * from its own read-only connection to the embedded log's file, and posts them to the main thread in
 * batches (replay-batch.ts), the topics in turn, one batch each. Once every topic has reached the next
 * offset it had at the start, it posts each topic's next offset (`done`) and ends: the main thread
 * follows the log from there. At most `windowBatches` batches are in flight unacknowledged.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { encodeReplayBatch, type RawRecord, type ReplayMessage } from './replay-batch.ts';

export interface EmbeddedReplayWorkerData {
  readonly path: string;
  readonly topics: readonly string[];
  /** Start offsets (decimal strings) per topic; the others start at their first record. */
  readonly seek: readonly { topic: string; offset: string }[];
  /** Rows per batch. */
  readonly batchRows: number;
  readonly windowBatches: number;
}

const port = parentPort!;
const data = workerData as EmbeddedReplayWorkerData;
const post = (message: ReplayMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

let inFlight = 0;
let resumeReader: (() => void) | undefined;
port.on('message', (message: unknown) => {
  if (message !== 'ack') return;
  inFlight--;
  if (inFlight < data.windowBatches && resumeReader) {
    const resume = resumeReader;
    resumeReader = undefined;
    resume();
  }
});

async function replay(): Promise<void> {
  const db = new DatabaseSync(data.path, { readOnly: true });
  try {
    // As the log's own connection (embedded-db.ts): a memory map, and a wait for a writer's lock.
    db.exec(`PRAGMA busy_timeout = 10000; PRAGMA mmap_size = ${2 ** 31};`);
    const topicRow = db.prepare('SELECT next_offset FROM topics WHERE name = ?');
    const firstOffset = db.prepare('SELECT MIN(offset) AS first FROM records WHERE topic = ?');
    // The value and key as their bytes (UTF-8, as stored): copied once into the batch, not decoded here.
    const read = db.prepare(
      'SELECT offset, CAST(key AS BLOB), CAST(value AS BLOB), ts FROM records WHERE topic = ? AND offset >= ? AND offset < ? ORDER BY offset LIMIT ?',
    );
    for (const statement of [topicRow, firstOffset, read]) statement.setReadBigInts(true);
    read.setReturnArrays(true);
    const positions = data.topics.map((topic) => {
      const row = topicRow.get(topic) as { next_offset: bigint } | undefined;
      const sought = data.seek.find((position) => position.topic === topic);
      const first = (firstOffset.get(topic) as { first: bigint | null }).first ?? 0n;
      return { topic, offset: sought ? BigInt(sought.offset) : first, end: row?.next_offset ?? 0n };
    });
    let more = true;
    while (more) {
      more = false;
      for (const position of positions) {
        if (position.offset >= position.end) continue;
        const rows = read.all(position.topic, position.offset, position.end, data.batchRows) as unknown as [
          offset: bigint,
          key: Uint8Array | null,
          value: Uint8Array,
          ts: bigint,
        ][];
        if (rows.length === 0) {
          position.offset = position.end;
          continue;
        }
        const records: RawRecord[] = rows.map(([offset, key, value, ts]) => ({ offset, key, value, timestamp: Number(ts) }));
        const { batch, transfer } = encodeReplayBatch(position.topic, 0, records);
        inFlight++;
        post(batch, transfer);
        position.offset = records[records.length - 1]!.offset + 1n;
        if (position.offset < position.end) more = true;
        if (inFlight >= data.windowBatches) await new Promise<void>((resume) => (resumeReader = resume));
      }
    }
    post({ type: 'done', positions: positions.map(({ topic, offset }) => ({ topic, partition: 0, offset: offset.toString() })) });
  } finally {
    db.close();
  }
}

replay()
  .catch((error: unknown) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }))
  // Nothing is left to wait for (the main thread's acknowledgements included): let the thread end.
  .finally(() => port.unref());
