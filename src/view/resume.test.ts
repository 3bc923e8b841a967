import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../log/port.ts';
import { checkResume } from './resume.ts';
import { valueDigest } from './snapshot.ts';

const record = (topic: string, offset: bigint, value: string): LogRecord => ({
  topic,
  partition: 0,
  offset,
  key: null,
  value,
  timestamp: 0,
});

describe('checkResume', () => {
  const checks = [{ topic: 'a', partition: 0, offset: 4n, sha256: valueDigest('four') }];
  it('drops the checked record and passes the rest', async () => {
    const out = await lastValueFrom(
      from([record('b', 0n, 'x'), record('a', 4n, 'four'), record('a', 5n, 'five')]).pipe(checkResume(checks), toArray()),
    );
    expect(out.map((r) => `${r.topic}@${r.offset}`)).toEqual(['b@0', 'a@5']);
  });
  it('errors when the record at the resume offset differs, or the partition starts elsewhere', async () => {
    await expect(
      lastValueFrom(from([record('a', 4n, 'other'), record('a', 5n, 'five')]).pipe(checkResume(checks), toArray())),
    ).rejects.toMatchObject({ code: 'VIEW_SNAPSHOT_MISMATCH', message: expect.stringContaining('differs') });
    await expect(lastValueFrom(from([record('a', 7n, 'seven')]).pipe(checkResume(checks), toArray()))).rejects.toMatchObject({
      code: 'VIEW_SNAPSHOT_MISMATCH',
      message: expect.stringContaining('starts at 7'),
    });
  });
});
