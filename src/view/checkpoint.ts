import { errorMessage } from '../errors.ts';
import { describeChain, sameChain } from '../log/chain-stamp.ts';
import type { LogRecord, RecordPosition } from '../log/port.ts';
import { readSnapshotText, writeSnapshotFile } from '../log/snapshot-file.ts';
import type { Logger } from '../obs/logger.ts';
import type { Counter } from '../obs/metrics.ts';
import type { ChainIdentity } from '../records/meta.ts';
import { decodeSnapshot, encodeSnapshot, valueDigest, type ViewSnapshot } from './snapshot.ts';
import type { ViewState } from './state.ts';

/**
 * The view's checkpoint: the snapshot file it resumes from, when that snapshot fits the log, and
 * the snapshot it writes (now, every interval, once replayed and at close).
 */

/** The log a snapshot is held against: its identity, the chain it holds (its stamp), its end offsets. */
export interface SnapshotLog {
  readonly logIdentity: string | null;
  readonly chain: ChainIdentity | null;
  readonly targets: readonly RecordPosition[];
}

/** Why a snapshot does not fit the log, or undefined when it does. Pure. */
export function snapshotMismatch(
  snapshot: ViewSnapshot,
  log: SnapshotLog,
):
  | { readonly reason: 'other-log' | 'other-chain' | 'ahead'; readonly detail: Record<string, unknown>; readonly message: string }
  | undefined {
  if (snapshot.logIdentity !== log.logIdentity) {
    return {
      reason: 'other-log',
      detail: { snapshotOf: snapshot.logIdentity, log: log.logIdentity },
      message: 'view snapshot was taken from another log; replaying the whole log',
    };
  }
  const snapshotChain = snapshot.chain ?? null;
  if (snapshotChain && log.chain && !sameChain(snapshotChain, log.chain)) {
    return {
      reason: 'other-chain',
      detail: { snapshotOf: describeChain(snapshotChain), log: describeChain(log.chain) },
      message: 'view snapshot was taken from a log of another chain; replaying the whole log',
    };
  }
  const ahead = snapshot.checks.find((check) => {
    const end = log.targets.find((target) => target.topic === check.topic && target.partition === check.partition);
    return end === undefined || end.offset <= check.offset;
  });
  if (ahead) {
    return {
      reason: 'ahead',
      detail: { topic: ahead.topic, partition: ahead.partition, offset: String(ahead.offset) },
      message: 'view snapshot is ahead of the log (a different or truncated log); replaying the whole log',
    };
  }
  return undefined;
}

/** The snapshot to resume from, if there is one that fits this log; otherwise one line saying why not. */
export function loadSnapshot(
  path: string,
  log: SnapshotLog,
  { logger, fallbacks }: { readonly logger: Logger; readonly fallbacks: Counter<string> },
): ViewSnapshot | undefined {
  const file = readSnapshotText(path);
  const loaded = file.ok ? decodeSnapshot(file.text) : file;
  if (!loaded.ok) {
    if ('missing' in loaded) logger.info({ path }, 'no view snapshot; replaying the whole log');
    else {
      logger.warn({ path, reason: loaded.reason }, 'view snapshot unusable; replaying the whole log');
      fallbacks.inc({ reason: 'unreadable' });
    }
    return undefined;
  }
  const mismatch = snapshotMismatch(loaded.snapshot, log);
  if (mismatch) {
    logger.warn({ path, ...mismatch.detail }, mismatch.message);
    fallbacks.inc({ reason: mismatch.reason });
    return undefined;
  }
  logger.info({ path, applied: loaded.snapshot.state.applied }, 'resuming the view from its snapshot');
  return loaded.snapshot;
}

/** What a snapshot written now resumes after: the last record applied per partition, with its digest. Pure. */
export function snapshotChecks(lastRecords: Iterable<LogRecord>): ViewSnapshot['checks'] {
  return [...lastRecords].map((record) => ({
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    sha256: valueDigest(record.value),
  }));
}

export interface SnapshotWriter {
  /** Writes the snapshot now (no-op without a path, before the replay is over, or while a write is under way). */
  write(): Promise<void>;
  /** Stops the interval, waits for a write under way and writes the last state. */
  close(): Promise<void>;
}

export function createSnapshotWriter(options: {
  readonly snapshot?: { readonly path: string; readonly intervalMs: number } | undefined;
  readonly logIdentity: string | null;
  readonly chain: ChainIdentity | null;
  readonly logger: Logger;
  /** The view now. */
  readonly current: () => ViewState;
  /** The last record applied per partition. */
  readonly lastRecords: () => Iterable<LogRecord>;
  /** Whether the replay is over (no snapshot is written before). */
  readonly ready: () => boolean;
}): SnapshotWriter {
  const { snapshot, logger } = options;
  let written = -1;
  let writing: Promise<void> | undefined;
  function write(): Promise<void> {
    const current = options.current();
    if (!snapshot || !options.ready() || current.seq === written) return Promise.resolve();
    if (writing) return writing;
    const { path } = snapshot;
    // The text is taken now, in one go, so it holds one state and the records it was built from.
    const seq = current.seq;
    const checks = snapshotChecks(options.lastRecords());
    const text = encodeSnapshot({ logIdentity: options.logIdentity, chain: options.chain, state: current, checks });
    writing = writeSnapshotFile(path, text)
      .then(
        () => {
          written = seq;
        },
        (error: unknown) => {
          logger.warn({ err: errorMessage(error), path }, 'could not write the view snapshot');
        },
      )
      .finally(() => {
        writing = undefined;
      });
    return writing;
  }
  const timer = snapshot && snapshot.intervalMs > 0 ? setInterval(() => void write(), snapshot.intervalMs) : undefined;
  timer?.unref();
  return {
    write,
    async close() {
      if (timer) clearInterval(timer);
      await writing;
      await write();
    },
  };
}
