import { Buffer, isAscii } from 'node:buffer';
import type { LazyBatch } from '../batch-queue.ts';
import type { LogRecord } from '../port.ts';

/**
 * One batch of records of one partition as a replay worker hands it to the main thread, built so
 * that posting it copies nothing and the main thread decodes once per batch, not once per record:
 * the values (and keys) laid end to end in one byte buffer each, with where each one ends, and the
 * offsets and timestamps, all transferred (moved, not cloned). The main thread makes each record's
 * text as it delivers it (latin1 when the batch is all ASCII, as flashlog's JSON is: a plain copy).
 * Measured and not kept: joining the worker's strings and posting the joined string (every byte
 * copied three times, join, serialize, deserialize: it cost the worker more than kafkajs's
 * decoding); one string per batch with each value a slice of it (V8 allocates the 1-12 MB string
 * outside the young generation, and that copy alone cost the main thread more than SQLite's reads);
 * decoding a batch's records all at once (they outlived young-generation collections).
 */
export interface ReplayBatch {
  readonly type: 'batch';
  readonly topic: string;
  readonly partition: number;
  readonly values: Uint8Array;
  /** valueEnds[i]: the end of record i's value in `values` (its start is valueEnds[i - 1], or 0). */
  readonly valueEnds: Uint32Array;
  readonly keys: Uint8Array;
  /** keyEnds[i]: the end of record i's key in `keys`; -1 for a record without a key. */
  readonly keyEnds: Int32Array;
  readonly offsets: BigInt64Array;
  readonly timestamps: Float64Array;
}

/** The next offset of each partition once the worker has read every record present when it began. */
export interface ReplayDone {
  readonly type: 'done';
  readonly positions: readonly { readonly topic: string; readonly partition: number; readonly offset: string }[];
}

export interface ReplayFailed {
  readonly type: 'error';
  readonly message: string;
}

export type ReplayMessage = ReplayBatch | ReplayDone | ReplayFailed;

/**
 * The main thread's answer to each batch once it has delivered all of its records: the batch's value
 * buffer goes back to the worker, which writes a later batch into it. Buffers that kept arriving
 * and were freed only by the garbage collector were external memory that made V8 collect the main
 * heap (the whole view) over and over; a handful of buffers going back and forth is not.
 */
export interface ReplayAck {
  readonly type: 'ack';
  readonly buffer: ArrayBuffer;
}

/** The buffers acknowledged batches gave back (at most `keep`), for the next batches' values. */
export function createBufferPool(keep: number) {
  const spare: ArrayBuffer[] = [];
  return {
    give(buffer: ArrayBuffer): void {
      spare.push(buffer);
      if (spare.length > keep) spare.sort((a, b) => b.byteLength - a.byteLength).pop();
    },
    /** A buffer of at least `bytes`: a spare one, or a new one with room to spare for the next. */
    take(bytes: number): ArrayBuffer {
      const index = spare.findIndex((buffer) => buffer.byteLength >= bytes);
      if (index >= 0) return spare.splice(index, 1)[0]!;
      return new ArrayBuffer(Math.max(bytes + (bytes >> 2), 1 << 16));
    },
  };
}
export type BufferPool = ReturnType<typeof createBufferPool>;

/** A record as a worker reads it: the value and key as UTF-8 bytes. */
export interface RawRecord {
  readonly offset: bigint;
  readonly key: Uint8Array | null;
  readonly value: Uint8Array;
  readonly timestamp: number;
}

/** The batch of `records` (one partition, offset order) and the buffers to transfer with it. */
export function encodeReplayBatch(
  topic: string,
  partition: number,
  records: readonly RawRecord[],
  pool: BufferPool,
): { batch: ReplayBatch; transfer: ArrayBuffer[] } {
  const count = records.length;
  const valueEnds = new Uint32Array(count);
  const keyEnds = new Int32Array(count);
  const offsets = new BigInt64Array(count);
  const timestamps = new Float64Array(count);
  let valueBytes = 0;
  let keyBytes = 0;
  for (const record of records) {
    valueBytes += record.value.byteLength;
    keyBytes += record.key?.byteLength ?? 0;
  }
  // Not Buffer.allocUnsafe: Node's pooled buffers share their memory and cannot be transferred.
  const values = new Uint8Array(pool.take(valueBytes), 0, valueBytes);
  const keys = new Uint8Array(keyBytes);
  let valueEnd = 0;
  let keyEnd = 0;
  for (let i = 0; i < count; i++) {
    const record = records[i]!;
    values.set(record.value, valueEnd);
    valueEnd += record.value.byteLength;
    valueEnds[i] = valueEnd;
    if (record.key === null) keyEnds[i] = -1;
    else {
      keys.set(record.key, keyEnd);
      keyEnd += record.key.byteLength;
      keyEnds[i] = keyEnd;
    }
    offsets[i] = record.offset;
    timestamps[i] = record.timestamp;
  }
  return {
    batch: { type: 'batch', topic, partition, values, valueEnds, keys, keyEnds, offsets, timestamps },
    transfer: [values.buffer, valueEnds.buffer, keys.buffer, keyEnds.buffer, offsets.buffer, timestamps.buffer],
  };
}

/** The text of each range of `bytes` (ends as in ReplayBatch; -1: null), one at a time. */
function texts(bytes: Uint8Array, ends: Uint32Array | Int32Array): (index: number) => string | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // All ASCII (flashlog's JSON): latin1 is then the same text, copied without UTF-8 decoding.
  const encoding = isAscii(buffer) ? 'latin1' : 'utf8';
  return (index) => {
    const end = ends[index]!;
    if (end < 0) return null;
    let start = 0;
    for (let previous = index - 1; previous >= 0; previous--) {
      if (ends[previous]! >= 0) {
        start = ends[previous]!;
        break;
      }
    }
    return buffer.toString(encoding, start, end);
  };
}

/** The records of a batch, in order, each decoded when it is asked for; `delivered` once all were. */
export function decodeReplayBatch(batch: ReplayBatch, delivered: () => void): LazyBatch<LogRecord> {
  const { topic, partition, offsets, timestamps } = batch;
  const value = texts(batch.values, batch.valueEnds);
  const key = texts(batch.keys, batch.keyEnds);
  return {
    length: offsets.length,
    delivered,
    item: (index) => ({
      topic,
      partition,
      offset: offsets[index]!,
      key: key(index),
      value: value(index) ?? '',
      timestamp: timestamps[index]!,
    }),
  };
}
