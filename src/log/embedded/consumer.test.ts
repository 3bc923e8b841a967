import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from './embedded.ts';
import type { Log, LogRecord } from '../port.ts';

/**
 * Whether this process maps the file at `path` (Linux: /proc/self/maps lists every mapping, its
 * path last on the line). The WAL index (`-shm`) is always mapped: it is another path.
 */
const mapped = (path: string) =>
  readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .some((line) => line.endsWith(` ${path}`));

describe('embedded log: the memory map', () => {
  let dir: string | undefined;
  let log: Log | undefined;
  afterEach(async () => {
    await log?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads a backlog through a map of the file, drops it once caught up, and reads live records without it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flashlog-mmap-'));
    const path = join(dir, 'log.db');
    log = createEmbeddedLog({ path, batchSize: 500 });
    await log.ensureTopics([{ name: 't' }]);
    // 12 MB of records: past SQLite's automatic checkpoint, so most pages are read from the file.
    const value = 'x'.repeat(4096);
    for (let first = 0; first < 3000; first += 500) {
      await log.produce(Array.from({ length: 500 }, (_, i) => ({ topic: 't', key: String(first + i), value })));
    }

    const consumer = log.consumer({ topics: ['t'], from: 'earliest' });
    const seen: LogRecord[] = [];
    const mappedAt = new Map<bigint, boolean>();
    let done!: () => void;
    let wanted = 3000;
    let reached = new Promise<void>((resolve) => (done = resolve));
    const subscription = consumer.records$.subscribe((record) => {
      seen.push(record);
      if (record.offset === 1200n || record.offset >= 3000n) mappedAt.set(record.offset, mapped(path));
      if (seen.length === wanted) done();
    });
    await reached;
    expect(mappedAt.get(1200n)).toBe(true);
    expect(mapped(path)).toBe(false);

    wanted = 3010;
    reached = new Promise<void>((resolve) => (done = resolve));
    for (let i = 0; i < 10; i++) await log.produce([{ topic: 't', key: `live-${i}`, value }]);
    await reached;
    subscription.unsubscribe();
    await consumer.close();

    expect(seen.map((record) => record.offset)).toEqual(Array.from({ length: 3010 }, (_, i) => BigInt(i)));
    expect([...mappedAt].filter(([offset]) => offset >= 3000n)).toEqual(
      Array.from({ length: 10 }, (_, i) => [3000n + BigInt(i), false] as const),
    );
  });

  it('lets a reader close the log in the middle of a backlog', async () => {
    dir = mkdtempSync(join(tmpdir(), 'flashlog-mmap-'));
    const path = join(dir, 'log.db');
    const closing = createEmbeddedLog({ path, batchSize: 100 });
    log = closing;
    await closing.ensureTopics([{ name: 't' }]);
    const offsets: bigint[] = [];
    const ended = new Promise<string>((resolve) => {
      closing.consumer({ topics: ['t'] }).records$.subscribe({
        next: (record) => {
          offsets.push(record.offset);
          if (record.offset === 250n) void closing.close();
        },
        error: (error: Error) => resolve(`error: ${error.message}`),
        complete: () => resolve('complete'),
      });
    });
    // Appended after the reader caught up: the backlog is drained from a timer (the append's
    // wake-up), where a throw would be uncaught and end the process.
    await closing.produce(Array.from({ length: 500 }, (_, i) => ({ topic: 't', key: String(i), value: 'x'.repeat(4096) })));
    // The reader learns that its log went away; nothing is thrown out of the drain.
    await expect(ended).resolves.toMatch(/^error: /);
    expect(offsets.at(-1)).toBe(299n);
    expect(mapped(path)).toBe(false);
  });
});
