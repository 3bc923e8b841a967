import { Buffer, isAscii } from 'node:buffer';
import type { LogRecord } from './port.ts';

/**
 * One batch of records of one partition as a replay worker hands it to the main thread, built so
 * that posting it copies nothing and the main thread decodes once per batch, not once per record:
 * the values (and keys) laid end to end in one byte buffer each, with where each one ends, and the
 * offsets and timestamps, all transferred (moved, not cloned). When a batch is all ASCII (flashlog's
 * records are JSON with escaped text), one decoding of the buffer gives one string whose character
 * positions are its byte positions, and each value is a slice of it (V8 keeps a slice as a reference
 * into the string: no copy); other batches are decoded record by record.
 * (Measured against joining the worker's strings and posting the joined string: that copied every
 * byte three times, join, serialize, deserialize, and cost the worker more than kafkajs's decoding.)
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
  // Not Buffer.allocUnsafe: a pooled buffer shares its memory and cannot be transferred.
  const values = new Uint8Array(valueBytes);
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

/** Text of each byte range of `bytes` (ends as in ReplayBatch; -1: null). */
function texts(bytes: Uint8Array, ends: Uint32Array | Int32Array): (string | null)[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: (string | null)[] = new Array(ends.length);
  const whole = isAscii(buffer) ? buffer.toString('latin1') : undefined;
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    const end = ends[i]!;
    if (end < 0) {
      out[i] = null;
      continue;
    }
    out[i] = whole === undefined ? buffer.toString('utf8', start, end) : whole.slice(start, end);
    start = end;
  }
  return out;
}

/** The records of a batch, in order. */
export function decodeReplayBatch(batch: ReplayBatch): LogRecord[] {
  const { topic, partition, offsets, timestamps } = batch;
  const values = texts(batch.values, batch.valueEnds);
  const keys = texts(batch.keys, batch.keyEnds);
  const records: LogRecord[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    records[i] = { topic, partition, offset: offsets[i]!, key: keys[i]!, value: values[i]!, timestamp: timestamps[i]! };
  }
  return records;
}
