import { EMPTY, catchError, concat, defer, map, merge, of, scan, shareReplay, tap, type Observable, type Subscription } from 'rxjs';
import type { Context } from '../src/context.ts';
import { errorMessage } from '../src/errors.ts';
import type { Log, LogConsumer, LogRecord, RecordPosition } from '../src/log/port.ts';
import { topics } from '../src/records/topics.ts';
import { counter, gauge } from '../src/obs/metrics.ts';
import { checkResume } from '../src/view/resume.ts';
import { describeChain, readChainStamp, sameChain } from '../src/log/chain-stamp.ts';
import type { ChainIdentity } from '../src/records/meta.ts';
import { readSnapshotText, writeSnapshotFile } from '../src/log/snapshot-file.ts';
import { decodeSnapshot, encodeSnapshot, valueDigest, type ViewSnapshot } from '../src/view/snapshot.ts';
import { createDeferredReplay, type DeferredReplay } from '../src/view/replay.ts';
import { apply, initialViewState, type ViewInput, type ViewState } from '../src/view/state.ts';

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

export interface Replayed {
  /** Records read by this replay (after the snapshot, when one was used). */
  readonly records: number;
  readonly ms: number;
  readonly perSecond: number;
  /** Whether the replay started from a snapshot. */
  readonly fromSnapshot: boolean;
  /** Block records never parsed or validated: their block was superseded before the end of the replay. */
  readonly skipped: number;
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

type Input = ViewInput | { readonly type: 'reset' };

export async function materialize(ctx: Context, deps: MaterializeDeps): Promise<Materialized> {
  const { logger, metrics } = ctx;
  const appliedOffset = gauge(metrics, 'flashlog_view_applied_offset', 'next offset the view will apply, per topic and partition', [
    'topic',
    'partition',
  ]);
  const records = counter(metrics, 'flashlog_view_records_total', 'records applied to the view');
  const invalid = counter(metrics, 'flashlog_view_invalid_records_total', 'records the view rejected by schema');
  const pendingBlocks = gauge(metrics, 'flashlog_view_pending_blocks', 'pre-confirmed blocks above canonical in the view');
  const pendingNumber = gauge(metrics, 'flashlog_view_pending_block_number', 'number of the latest pre-confirmed block');
  const replayRate = gauge(metrics, 'flashlog_view_replay_records_per_second', 'records per second of the start-up replay');
  const replayProgress = gauge(metrics, 'flashlog_view_replay_progress_ratio', 'fraction of the start-up replay applied (1 once live)');
  const replaySkipped = counter(
    metrics,
    'flashlog_view_replay_skipped_records_total',
    'block records the start-up replay never parsed or validated: their block was superseded before the end of the replay',
  );
  const snapshotFallbacks = counter(
    metrics,
    'flashlog_view_snapshot_fallbacks_total',
    'restarts that replayed the whole log although a snapshot existed',
    ['reason'],
  );

  const targets: RecordPosition[] = (await Promise.all(viewTopics.map((topic) => deps.log.endOffsets(topic)))).flat();
  const total = targets.reduce((sum, position) => sum + Number(position.offset), 0);
  const logIdentity = deps.log.identity ? await deps.log.identity() : null;
  // The chain the log holds (its stamp): a snapshot of another chain is not resumed from.
  const chain = await readChainStamp(deps.log).catch(() => null);
  const resume = loadSnapshot(ctx, deps, targets, { logIdentity, chain }, snapshotFallbacks);
  let start = resume?.state ?? initialViewState();
  let fromSnapshot = resume !== undefined;
  const consumers: LogConsumer[] = [];
  // Records to replay from `seek` (or the start) to the end offsets taken above.
  const backlog = (seek?: readonly RecordPosition[]) =>
    targets.reduce((sum, target) => {
      const from = seek?.find((position) => position.topic === target.topic && position.partition === target.partition)?.offset ?? 0n;
      return sum + Number(target.offset - from);
    }, 0);
  const open = (seek?: readonly RecordPosition[]) => {
    const consumer = deps.log.consumer({
      topics: [...viewTopics],
      ...(deps.group ? { group: deps.group } : {}),
      from: 'earliest',
      ...(seek ? { seek } : {}),
      // A long replay reads and decodes the log on the second core, where the log can; a short one
      // is over before a worker would have started (loading its modules, joining the broker).
      replayInWorker: backlog(seek) >= (deps.replayInWorkerFrom ?? workerReplayRecords),
    });
    consumers.push(consumer);
    return consumer.records$;
  };
  // The last record applied per partition: what a snapshot written now resumes after.
  const lastRecords = new Map<string, LogRecord>();
  const track = tap((record: LogRecord) => lastRecords.set(`${record.topic}/${record.partition}`, record));
  const records$: Observable<Input> = resume
    ? open(resume.checks.map(({ topic, partition, offset }) => ({ topic, partition, offset }))).pipe(
        checkResume(resume.checks),
        track,
        map((record): Input => ({ type: 'record', record })),
        catchError((error: unknown) => {
          logger.warn({ err: errorMessage(error) }, 'view snapshot does not match the log; replaying the whole log');
          snapshotFallbacks.inc({ reason: 'mismatch' });
          void consumers[0]?.close();
          return defer(() => {
            lastRecords.clear();
            start = initialViewState();
            fromSnapshot = false;
            return concat(
              of<Input>({ type: 'reset' }),
              open().pipe(
                track,
                map((record): Input => ({ type: 'record', record })),
              ),
            );
          });
        }),
      )
    : open().pipe(
        track,
        map((record): Input => ({ type: 'record', record })),
      );

  const startedAt = Date.now();
  let replayDone = false;
  let resolveReplay!: (value: Replayed) => void;
  let rejectReplay!: (error: unknown) => void;
  const replayed = new Promise<Replayed>((resolve, reject) => {
    resolveReplay = resolve;
    rejectReplay = reject;
  });
  replayed.catch(() => {});
  let current = start;
  let lastInvalid = start.invalid;
  let lastProgressAt = Date.now();
  const targetKeys = targets.map((target) => [`${target.topic}/${target.partition}`, target.offset] as const);
  const caughtUp = (state: ViewState): boolean => targetKeys.every(([key, offset]) => (state.offsets[key] ?? 0n) >= offset);
  // The replay in progress (block records deferred), until the view has caught up.
  let replay: DeferredReplay | undefined = createDeferredReplay(start);
  let replayedRecords = 0;
  let skipped = 0;
  const finishReplay = (state: ViewState): void => {
    if (replayDone) return;
    replayDone = true;
    // Caught up before any record (an empty log, a snapshot at the log's end): nothing is deferred.
    replay = undefined;
    const ms = Date.now() - startedAt;
    const done = replayedRecords;
    const perSecond = ms > 0 ? Math.round(done / (ms / 1000)) : done;
    replayRate.set(perSecond);
    replayProgress.set(1);
    setOffsetGauges(state);
    pendingBlocks.set(state.blocks.length);
    replaySkipped.inc(skipped);
    logger.info(
      { records: done, invalid: state.invalid, skipped, ms, perSecond, pendingBlocks: state.blocks.length, fromSnapshot },
      'view replayed; following live',
    );
    resolveReplay({ records: done, ms, perSecond, fromSnapshot, skipped });
    void writeSnapshot();
  };
  const setOffsetGauges = (state: ViewState) => {
    for (const [key, offset] of Object.entries(state.offsets)) {
      const slash = key.lastIndexOf('/');
      appliedOffset.set({ topic: key.slice(0, slash), partition: key.slice(slash + 1) }, Number(offset));
    }
  };

  const inputs$: Observable<Input> = merge(
    records$,
    (deps.heads$ ?? EMPTY).pipe(map((blockNumber): Input => ({ type: 'head', blockNumber }))),
  );
  const states$ = inputs$.pipe(
    scan((state: ViewState, input: Input): ViewState => {
      if (input.type === 'reset') {
        replay = createDeferredReplay(initialViewState());
        replayedRecords = 0;
        return replay.state();
      }
      if (replay === undefined) return apply(state, input);
      replay.apply(input);
      if (input.type === 'record') replayedRecords++;
      if (!caughtUp(replay.state())) return replay.state();
      const replayedState = replay.finish();
      skipped = replay.skipped();
      replay = undefined;
      return replayedState;
    }, start),
    tap((state) => {
      current = state;
      if (state.invalid > lastInvalid) {
        invalid.inc(state.invalid - lastInvalid);
        lastInvalid = state.invalid;
        logger.warn({ reason: state.lastInvalid }, 'record rejected by the view');
      }
      if (!replayDone) {
        const now = Date.now();
        if (now - lastProgressAt >= 1000) {
          lastProgressAt = now;
          const done = replayedRecords;
          replayProgress.set(total ? (start.applied + start.invalid + done) / total : 1);
          logger.info({ applied: done, of: total, perSecond: Math.round(done / ((now - startedAt) / 1000)) }, 'replaying the view');
          setOffsetGauges(state);
        }
        if (caughtUp(state)) finishReplay(state);
        return;
      }
      pendingBlocks.set(state.blocks.length);
      const latest = state.blocks[state.blocks.length - 1];
      if (latest) pendingNumber.set(Number(latest.number));
      if (state.change.type !== 'none') setOffsetGauges(state);
    }),
    shareReplay({ bufferSize: 1, refCount: false }),
  );

  let written = -1;
  let writing: Promise<void> | undefined;
  function writeSnapshot(): Promise<void> {
    if (!deps.snapshot || !replayDone || current.seq === written) return Promise.resolve();
    if (writing) return writing;
    const { path } = deps.snapshot;
    // The text is taken now, in one go, so it holds one state and the records it was built from.
    const seq = current.seq;
    const checks: ViewSnapshot['checks'] = [...lastRecords.values()].map((record) => ({
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      sha256: valueDigest(record.value),
    }));
    const text = encodeSnapshot({ logIdentity, chain, state: current, checks });
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
  const snapshotTimer =
    deps.snapshot && deps.snapshot.intervalMs > 0 ? setInterval(() => void writeSnapshot(), deps.snapshot.intervalMs) : undefined;
  snapshotTimer?.unref();

  const subscription: Subscription = states$.subscribe({
    error: (error: unknown) => {
      logger.error({ err: errorMessage(error) }, 'the view stopped: log failed');
      rejectReplay(error);
    },
  });
  if (total === 0 || caughtUp(current)) finishReplay(current);
  let applied = start.applied;
  const counted = states$.subscribe((state) => {
    if (state.applied > applied) records.inc(state.applied - applied);
    applied = state.applied;
  });
  return {
    states$,
    current: () => current,
    replayed,
    writeSnapshot,
    async close() {
      if (snapshotTimer) clearInterval(snapshotTimer);
      await writing;
      await writeSnapshot();
      counted.unsubscribe();
      subscription.unsubscribe();
      await Promise.all(consumers.map((consumer) => consumer.close()));
    },
  };
}

/** The snapshot to resume from, if there is one that fits this log; otherwise one line saying why not. */
function loadSnapshot(
  ctx: Context,
  deps: MaterializeDeps,
  targets: readonly RecordPosition[],
  { logIdentity, chain }: { logIdentity: string | null; chain: ChainIdentity | null },
  fallbacks: ReturnType<typeof counter>,
): ViewSnapshot | undefined {
  if (!deps.snapshot) return undefined;
  const { path } = deps.snapshot;
  const file = readSnapshotText(path);
  const loaded = file.ok ? decodeSnapshot(file.text) : file;
  if (!loaded.ok) {
    if ('missing' in loaded) ctx.logger.info({ path }, 'no view snapshot; replaying the whole log');
    else {
      ctx.logger.warn({ path, reason: loaded.reason }, 'view snapshot unusable; replaying the whole log');
      fallbacks.inc({ reason: 'unreadable' });
    }
    return undefined;
  }
  if (loaded.snapshot.logIdentity !== logIdentity) {
    ctx.logger.warn(
      { path, snapshotOf: loaded.snapshot.logIdentity, log: logIdentity },
      'view snapshot was taken from another log; replaying the whole log',
    );
    fallbacks.inc({ reason: 'other-log' });
    return undefined;
  }
  const snapshotChain = loaded.snapshot.chain ?? null;
  if (snapshotChain && chain && !sameChain(snapshotChain, chain)) {
    ctx.logger.warn(
      { path, snapshotOf: describeChain(snapshotChain), log: describeChain(chain) },
      'view snapshot was taken from a log of another chain; replaying the whole log',
    );
    fallbacks.inc({ reason: 'other-chain' });
    return undefined;
  }
  const ahead = loaded.snapshot.checks.find((check) => {
    const end = targets.find((target) => target.topic === check.topic && target.partition === check.partition);
    return end === undefined || end.offset <= check.offset;
  });
  if (ahead) {
    ctx.logger.warn(
      { path, topic: ahead.topic, partition: ahead.partition, offset: String(ahead.offset) },
      'view snapshot is ahead of the log (a different or truncated log); replaying the whole log',
    );
    fallbacks.inc({ reason: 'ahead' });
    return undefined;
  }
  ctx.logger.info({ path, applied: loaded.snapshot.state.applied }, 'resuming the view from its snapshot');
  return loaded.snapshot;
}
