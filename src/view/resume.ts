import { Observable } from 'rxjs';
import { FlashlogError } from '../errors.ts';
import type { LogRecord } from '../log/port.ts';
import { valueDigest, type SnapshotCheck } from './snapshot.ts';

/**
 * A consumer resumed from a snapshot starts each checked partition at the snapshot's last record.
 * This operator holds that record against its fingerprint and drops it; every other record passes.
 * A partition whose first record is not the expected one errors with VIEW_SNAPSHOT_MISMATCH.
 */
export function checkResume(checks: readonly SnapshotCheck[]) {
  return (records$: Observable<LogRecord>): Observable<LogRecord> =>
    new Observable<LogRecord>((subscriber) => {
      const expected = new Map(checks.map((check) => [`${check.topic}/${check.partition}`, check]));
      return records$.subscribe({
        next(record) {
          if (expected.size === 0) {
            subscriber.next(record);
            return;
          }
          const key = `${record.topic}/${record.partition}`;
          const check = expected.get(key);
          if (check === undefined) {
            subscriber.next(record);
            return;
          }
          expected.delete(key);
          if (record.offset !== check.offset) {
            subscriber.error(
              new FlashlogError(
                'VIEW_SNAPSHOT_MISMATCH',
                `${key}: the snapshot resumes after offset ${check.offset}, the log starts at ${record.offset}`,
              ),
            );
          } else if (valueDigest(record.value) !== check.sha256) {
            subscriber.error(
              new FlashlogError(
                'VIEW_SNAPSHOT_MISMATCH',
                `${key}@${record.offset}: the record differs from the one the snapshot was taken after`,
              ),
            );
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
    });
}
