import type { LogRecord } from './port.ts';

/**
 * One batch of records of one partition as a replay worker hands it to the main thread: the values
 * (and keys) joined into one string each, with where each one ends, and the offsets and timestamps
 * as typed arrays. Posting it copies two flat strings and moves the arrays (transfer), instead of
 * structured-cloning one object per record; the main thread then makes each value a slice of the
 * joined string (V8 keeps a slice as a reference into it: no copy, no UTF-8 decoding).
 */
export interface ReplayBatch {
  readonly type: 'batch';
  readonly topic: string;
  readonly partition: number;
  readonly values: string;
  /** valueEnds[i]: the end of record i's value in `values` (its start is valueEnds[i - 1], or 0). */
  readonly valueEnds: Uint32Array;
  readonly keys: string;
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

/** The batch of `records` (one partition, offset order) and the buffers to transfer with it. */
export function encodeReplayBatch(
  topic: string,
  partition: number,
  records: readonly { offset: bigint; key: string | null; value: string; timestamp: number }[],
): { batch: ReplayBatch; transfer: ArrayBuffer[] } {
  const count = records.length;
  const valueEnds = new Uint32Array(count);
  const keyEnds = new Int32Array(count);
  const offsets = new BigInt64Array(count);
  const timestamps = new Float64Array(count);
  const values: string[] = new Array(count);
  const keys: string[] = [];
  let valueEnd = 0;
  let keyEnd = 0;
  for (let i = 0; i < count; i++) {
    const record = records[i]!;
    values[i] = record.value;
    valueEnd += record.value.length;
    valueEnds[i] = valueEnd;
    if (record.key === null) keyEnds[i] = -1;
    else {
      keys.push(record.key);
      keyEnd += record.key.length;
      keyEnds[i] = keyEnd;
    }
    offsets[i] = record.offset;
    timestamps[i] = record.timestamp;
  }
  return {
    batch: { type: 'batch', topic, partition, values: values.join(''), valueEnds, keys: keys.join(''), keyEnds, offsets, timestamps },
    transfer: [valueEnds.buffer, keyEnds.buffer, offsets.buffer, timestamps.buffer],
  };
}

/** The records of a batch, in order. */
export function decodeReplayBatch(batch: ReplayBatch): LogRecord[] {
  const { topic, partition, values, valueEnds, keys, keyEnds, offsets, timestamps } = batch;
  const records: LogRecord[] = new Array(valueEnds.length);
  let valueStart = 0;
  let keyStart = 0;
  for (let i = 0; i < valueEnds.length; i++) {
    const valueEnd = valueEnds[i]!;
    const keyEnd = keyEnds[i]!;
    let key: string | null = null;
    if (keyEnd >= 0) {
      key = keys.slice(keyStart, keyEnd);
      keyStart = keyEnd;
    }
    records[i] = { topic, partition, offset: offsets[i]!, key, value: values.slice(valueStart, valueEnd), timestamp: timestamps[i]! };
    valueStart = valueEnd;
  }
  return records;
}
