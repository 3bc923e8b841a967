import { EMPTY, map, merge, scan, shareReplay, tap, type Observable, type Subscription } from 'rxjs';
import type { Context } from '../src/context.ts';
import { errorMessage } from '../src/errors.ts';
import type { Log, RecordPosition } from '../src/log/port.ts';
import { topics } from '../src/log/topics.ts';
import { counter, gauge } from '../src/obs/metrics.ts';
import { apply, initialViewState, type ViewInput, type ViewState } from '../src/view/state.ts';

/**
 * log -> view. Reads flashlog.blocks, flashlog.logs and flashlog.chain from the beginning (replay,
 * with a progress line and metrics), then follows them live:
 *
 *   merge(records$, heads$).pipe(scan(apply), shareReplay(1))
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
}

export interface Materialized {
  /** Every view state, the latest replayed to late subscribers. */
  readonly states$: Observable<ViewState>;
  /** The view now. */
  current(): ViewState;
  /** Resolves once the records present at start are applied (replay done). */
  readonly replayed: Promise<{ records: number; ms: number; perSecond: number }>;
  close(): Promise<void>;
}

export const viewTopics = [topics.blocks, topics.logs, topics.chain] as const;

export async function materialize(ctx: Context, deps: MaterializeDeps): Promise<Materialized> {
  const { logger, metrics } = ctx;
  const appliedOffset = gauge(metrics, 'flashlog_view_applied_offset', 'next offset the view will apply, per topic and partition', ['topic', 'partition']);
  const records = counter(metrics, 'flashlog_view_records_total', 'records applied to the view');
  const invalid = counter(metrics, 'flashlog_view_invalid_records_total', 'records the view rejected by schema');
  const pendingBlocks = gauge(metrics, 'flashlog_view_pending_blocks', 'pre-confirmed blocks above canonical in the view');
  const pendingNumber = gauge(metrics, 'flashlog_view_pending_block_number', 'number of the latest pre-confirmed block');
  const replayRate = gauge(metrics, 'flashlog_view_replay_records_per_second', 'records per second of the start-up replay');
  const replayProgress = gauge(metrics, 'flashlog_view_replay_progress_ratio', 'fraction of the start-up replay applied (1 once live)');

  const targets: RecordPosition[] = (await Promise.all(viewTopics.map((topic) => deps.log.endOffsets(topic)))).flat();
  const total = targets.reduce((sum, position) => sum + Number(position.offset), 0);
  const consumer = deps.log.consumer({ topics: [...viewTopics], ...(deps.group ? { group: deps.group } : {}), from: 'earliest' });
  const startedAt = Date.now();
  let replayDone = false;
  let resolveReplay!: (value: { records: number; ms: number; perSecond: number }) => void;
  let rejectReplay!: (error: unknown) => void;
  const replayed = new Promise<{ records: number; ms: number; perSecond: number }>((resolve, reject) => {
    resolveReplay = resolve;
    rejectReplay = reject;
  });
  replayed.catch(() => {});
  let current = initialViewState();
  let lastInvalid = 0;
  const caughtUp = (state: ViewState): boolean =>
    targets.every((target) => (state.offsets[`${target.topic}/${target.partition}`] ?? 0n) >= target.offset);
  const finishReplay = (state: ViewState): void => {
    replayDone = true;
    const ms = Date.now() - startedAt;
    const perSecond = ms > 0 ? Math.round((state.applied + state.invalid) / (ms / 1000)) : state.applied + state.invalid;
    replayRate.set(perSecond);
    replayProgress.set(1);
    logger.info({ records: state.applied + state.invalid, invalid: state.invalid, ms, perSecond, pendingBlocks: state.blocks.length }, 'view replayed; following live');
    resolveReplay({ records: state.applied + state.invalid, ms, perSecond });
  };
  let lastProgressAt = Date.now();

  const inputs$: Observable<ViewInput> = merge(
    consumer.records$.pipe(map((record) => ({ type: 'record' as const, record }))),
    (deps.heads$ ?? EMPTY).pipe(map((blockNumber) => ({ type: 'head' as const, blockNumber }))),
  );
  const states$ = inputs$.pipe(
    scan(apply, initialViewState()),
    tap((state) => {
      current = state;
      if (state.invalid > lastInvalid) {
        invalid.inc(state.invalid - lastInvalid);
        lastInvalid = state.invalid;
        logger.warn({ reason: state.lastInvalid }, 'record rejected by the view');
      }
      pendingBlocks.set(state.blocks.length);
      const latest = state.blocks[state.blocks.length - 1];
      if (latest) pendingNumber.set(Number(latest.number));
      if (!replayDone) {
        const now = Date.now();
        if (now - lastProgressAt >= 1000) {
          lastProgressAt = now;
          const done = state.applied + state.invalid;
          replayProgress.set(total ? done / total : 1);
          logger.info({ applied: done, of: total, perSecond: Math.round(done / ((now - startedAt) / 1000)) }, 'replaying the view');
        }
        if (caughtUp(state)) finishReplay(state);
      }
    }),
    shareReplay({ bufferSize: 1, refCount: false }),
  );
  const subscription: Subscription = states$.subscribe({
    next: (state) => {
      if (state.change.type !== 'none' || state.applied) {
        for (const [key, offset] of Object.entries(state.offsets)) {
          const slash = key.lastIndexOf('/');
          appliedOffset.set({ topic: key.slice(0, slash), partition: key.slice(slash + 1) }, Number(offset));
        }
      }
    },
    error: (error: unknown) => {
      logger.error({ err: errorMessage(error) }, 'the view stopped: log failed');
      rejectReplay(error);
    },
  });
  if (total === 0 || caughtUp(current)) finishReplay(current);
  let applied = 0;
  const counted = states$.subscribe((state) => {
    if (state.applied > applied) {
      records.inc(state.applied - applied);
      applied = state.applied;
    }
  });
  return {
    states$,
    current: () => current,
    replayed,
    async close() {
      counted.unsubscribe();
      subscription.unsubscribe();
      await consumer.close();
    },
  };
}
