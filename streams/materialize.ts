import { EMPTY, catchError, concat, defer, map, merge, of, scan, shareReplay, tap, type Observable, type Subscription } from 'rxjs';
import type { Context } from '../src/context.ts';
import { errorMessage } from '../src/errors.ts';
import { readChainStamp } from '../src/log/chain-stamp.ts';
import type { Log, LogConsumer, LogRecord, RecordPosition } from '../src/log/port.ts';
import { topics } from '../src/records/topics.ts';
import { createSnapshotWriter, loadSnapshot } from '../src/view/checkpoint.ts';
import { backlog, createReplayProgress, type ReplayInput, type Replayed } from '../src/view/replay-progress.ts';
import { checkResume } from '../src/view/resume.ts';
import { initialViewState, type ViewState } from '../src/view/state.ts';
import { createViewMetrics } from '../src/view/view-metrics.ts';

export type { Replayed } from '../src/view/replay-progress.ts';

/**
 * log -> view. Reads flashlog.blocks, flashlog.logs and flashlog.chain from the beginning, or from
 * the view's own snapshot when one matches the log (replay, with a progress line and metrics), then
 * follows them live:
 *
 *   merge(records$, heads$).pipe(scan(apply), shareReplay(1))      (a snapshot -> snapshot file)
 *
 * During the replay the view defers block records (src/view/replay.ts): a block's records after its
 * first are parsed only if the block is still needed at the end of the replay (or by a reorg).
 *
 * The reader has no consumer group (ephemeral) unless one is given, so every gateway reads every
 * record of every partition and builds the whole view itself.
 */
export interface MaterializeDeps {
  readonly log: Log;
  /** Canonical head numbers seen at the upstream (drop pending blocks that became canonical). */
  readonly heads$?: Observable<bigint>;
  /** A per-instance group id, when the log needs one; default none. */
  readonly group?: string;
  /** Where the view keeps its snapshot, and how often it writes it (also once replayed and at close). */
  readonly snapshot?: { readonly path: string; readonly intervalMs: number };
  /** The smallest replay read by a worker thread, where the log has one (Kafka); default 50,000 records. */
  readonly replayInWorkerFrom?: number;
}

export interface Materialized {
  /** Every view state, the latest replayed to late subscribers. */
  readonly states$: Observable<ViewState>;
  /** The view now. */
  current(): ViewState;
  /** Resolves once the records present at start are applied (replay done). */
  readonly replayed: Promise<Replayed>;
  /** Writes the snapshot now (no-op without a snapshot path, or while a write is under way). */
  writeSnapshot(): Promise<void>;
  close(): Promise<void>;
}

export const viewTopics = [topics.blocks, topics.logs, topics.chain] as const;
/** The smallest replay read by a worker thread (ConsumeOptions.replayInWorker), by default. */
const workerReplayRecords = 50_000;

export async function materialize(ctx: Context, deps: MaterializeDeps): Promise<Materialized> {
  const { logger } = ctx;
  const metrics = createViewMetrics(ctx.metrics);
  const targets: RecordPosition[] = (await Promise.all(viewTopics.map((topic) => deps.log.endOffsets(topic)))).flat();
  const logIdentity = deps.log.identity ? await deps.log.identity() : null;
  // The chain the log holds (its stamp): a snapshot of another chain is not resumed from.
  const chain = await readChainStamp(deps.log).catch(() => null);
  const resume = deps.snapshot
    ? loadSnapshot(deps.snapshot.path, { logIdentity, chain, targets }, { logger, fallbacks: metrics.snapshotFallbacks })
    : undefined;
  const start = resume?.state ?? initialViewState();
  const consumers: LogConsumer[] = [];
  const open = (seek?: readonly RecordPosition[]) => {
    const consumer = deps.log.consumer({
      topics: [...viewTopics],
      ...(deps.group ? { group: deps.group } : {}),
      from: 'earliest',
      ...(seek ? { seek } : {}),
      // A long replay reads and decodes the log on the second core, where the log can; a short one
      // is over before a worker would have started (loading its modules, joining the broker).
      replayInWorker: backlog(targets, seek) >= (deps.replayInWorkerFrom ?? workerReplayRecords),
    });
    consumers.push(consumer);
    return consumer.records$;
  };
  // The last record applied per partition: what a snapshot written now resumes after.
  const lastRecords = new Map<string, LogRecord>();
  const track = tap((record: LogRecord) => lastRecords.set(`${record.topic}/${record.partition}`, record));
  const toInput = map((record: LogRecord): ReplayInput => ({ type: 'record', record }));

  let resolveReplay!: (value: Replayed) => void;
  let rejectReplay!: (error: unknown) => void;
  const replayed = new Promise<Replayed>((resolve, reject) => {
    resolveReplay = resolve;
    rejectReplay = reject;
  });
  replayed.catch(() => {});
  const progress = createReplayProgress({
    targets,
    start,
    fromSnapshot: resume !== undefined,
    logger,
    metrics,
    onReplayed: (result) => {
      resolveReplay(result);
      void snapshots.write();
    },
  });

  const records$: Observable<ReplayInput> = resume
    ? open(resume.checks.map(({ topic, partition, offset }) => ({ topic, partition, offset }))).pipe(
        checkResume(resume.checks),
        track,
        toInput,
        catchError((error: unknown) => {
          logger.warn({ err: errorMessage(error) }, 'view snapshot does not match the log; replaying the whole log');
          metrics.snapshotFallbacks.inc({ reason: 'mismatch' });
          void consumers[0]?.close();
          return defer(() => {
            lastRecords.clear();
            progress.restart();
            return concat(of<ReplayInput>({ type: 'reset' }), open().pipe(track, toInput));
          });
        }),
      )
    : open().pipe(track, toInput);

  let current = start;
  const inputs$: Observable<ReplayInput> = merge(
    records$,
    (deps.heads$ ?? EMPTY).pipe(map((blockNumber): ReplayInput => ({ type: 'head', blockNumber }))),
  );
  const states$ = inputs$.pipe(
    scan((state: ViewState, input: ReplayInput) => progress.step(state, input), start),
    tap((state) => {
      current = state;
      progress.observe(state);
    }),
    shareReplay({ bufferSize: 1, refCount: false }),
  );
  const snapshots = createSnapshotWriter({
    snapshot: deps.snapshot,
    logIdentity,
    chain,
    logger,
    current: () => current,
    lastRecords: () => lastRecords.values(),
    ready: progress.done,
  });

  const subscription: Subscription = states$.subscribe({
    error: (error: unknown) => {
      logger.error({ err: errorMessage(error) }, 'the view stopped: log failed');
      rejectReplay(error);
    },
  });
  progress.finishIfCaughtUp(current);
  const counted = states$.subscribe(metrics.countApplied(progress.start().applied));
  return {
    states$,
    current: () => current,
    replayed,
    writeSnapshot: snapshots.write,
    async close() {
      await snapshots.close();
      counted.unsubscribe();
      subscription.unsubscribe();
      await Promise.all(consumers.map((consumer) => consumer.close()));
    },
  };
}
