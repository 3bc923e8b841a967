import { defaultIfEmpty, filter, firstValueFrom, last, scan, takeWhile } from 'rxjs';
import type { Log, LogRecord } from './port.ts';

/**
 * Reads a topic from its first record to the end offsets seen now: key -> the value of the last
 * record with that key (records without a key are skipped). The prover bridge loads its stored
 * replies this way at start.
 */
export async function readLatestByKey(log: Log, topic: string): Promise<Map<string, string>> {
  const latest = new Map<string, string>();
  const ends = await log.endOffsets(topic);
  const remaining = new Map(ends.filter((end) => end.offset > 0n).map((end) => [end.partition, end.offset]));
  if (remaining.size === 0) return latest;
  const consumer = log.consumer({ topics: [topic], from: 'earliest' });
  try {
    await firstValueFrom(
      consumer.records$.pipe(
        scan((left, record: LogRecord) => {
          if (record.key !== null) latest.set(record.key, record.value);
          const end = left.get(record.partition);
          if (end !== undefined && record.offset + 1n >= end) left.delete(record.partition);
          return left;
        }, remaining),
        takeWhile((left) => left.size > 0, true),
        filter((left) => left.size === 0),
        last(),
        defaultIfEmpty(undefined),
      ),
    );
  } finally {
    await consumer.close();
  }
  return latest;
}
