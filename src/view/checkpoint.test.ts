import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogRecord } from '../log/port.ts';
import { readSnapshotText } from '../log/snapshot-file.ts';
import { createLogger } from '../obs/logger.ts';
import { createSnapshotWriter, snapshotChecks, snapshotMismatch, type SnapshotLog } from './checkpoint.ts';
import { decodeSnapshot, valueDigest, type ViewSnapshot } from './snapshot.ts';
import { initialViewState, type ViewState } from './state.ts';

const chain = { chainId: 130n, genesisHash: `0x${'ab'.repeat(32)}` } as const;
const log: SnapshotLog = { logIdentity: 'log-1', chain, targets: [{ topic: 'flashlog.blocks', partition: 0, offset: 10n }] };
const snapshot = (overrides: Partial<ViewSnapshot> = {}): ViewSnapshot => ({
  logIdentity: 'log-1',
  chain,
  state: initialViewState(),
  checks: [{ topic: 'flashlog.blocks', partition: 0, offset: 9n, sha256: valueDigest('x') }],
  ...overrides,
});
const record = (offset: bigint, value: string): LogRecord => ({
  topic: 'flashlog.blocks',
  partition: 0,
  offset,
  key: null,
  value,
  timestamp: 0,
});

describe('snapshotMismatch', () => {
  it('accepts a snapshot of this log and chain behind its end offsets', () => {
    expect(snapshotMismatch(snapshot(), log)).toBeUndefined();
    expect(snapshotMismatch(snapshot({ chain: null }), log)).toBeUndefined();
  });

  it('names another log, another chain, and a snapshot at or past the end of the log', () => {
    expect(snapshotMismatch(snapshot({ logIdentity: 'log-2' }), log)?.reason).toBe('other-log');
    expect(snapshotMismatch(snapshot({ chain: { ...chain, chainId: 8453n } }), log)?.reason).toBe('other-chain');
    const ahead = snapshotMismatch(snapshot({ checks: [{ topic: 'flashlog.blocks', partition: 0, offset: 10n, sha256: '' }] }), log);
    expect(ahead).toMatchObject({ reason: 'ahead', detail: { topic: 'flashlog.blocks', partition: 0, offset: '10' } });
    const unknownPartition = snapshot({ checks: [{ topic: 'flashlog.blocks', partition: 1, offset: 0n, sha256: '' }] });
    expect(snapshotMismatch(unknownPartition, log)?.reason).toBe('ahead');
  });
});

describe('createSnapshotWriter', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('writes nothing before the replay is over, then the state and the last records, once per state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashlog-checkpoint-'));
    dirs.push(dir);
    const path = join(dir, 'view.snapshot');
    let ready = false;
    let current: ViewState = { ...initialViewState(), seq: 7, applied: 3 };
    const last = [record(4n, 'four')];
    const writer = createSnapshotWriter({
      snapshot: { path, intervalMs: 0 },
      logIdentity: 'log-1',
      chain,
      logger: createLogger({ level: 'silent' }),
      current: () => current,
      lastRecords: () => last,
      ready: () => ready,
    });
    await writer.write();
    expect(readSnapshotText(path).ok).toBe(false);
    ready = true;
    await writer.write();
    const file = readSnapshotText(path);
    const decoded = file.ok ? decodeSnapshot(file.text) : file;
    expect(decoded.ok && decoded.snapshot.state.applied).toBe(3);
    expect(decoded.ok && decoded.snapshot.checks).toEqual(snapshotChecks(last));
    expect(snapshotChecks(last)).toEqual([{ topic: 'flashlog.blocks', partition: 0, offset: 4n, sha256: valueDigest('four') }]);
    // the same state is not written again: a file removed meanwhile stays removed
    rmSync(path);
    await writer.write();
    expect(readSnapshotText(path).ok).toBe(false);
    current = { ...current, seq: 8 };
    await writer.close();
    expect(readSnapshotText(path).ok).toBe(true);
  });
});
