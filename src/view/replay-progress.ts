import type { RecordPosition } from '../log/port.ts';
import type { Logger } from '../obs/logger.ts';
import { createDeferredReplay, type DeferredReplay } from './replay.ts';
import { apply, initialViewState, type ViewInput, type ViewState } from './state.ts';
import type { ViewMetrics } from './view-metrics.ts';

/**
 * The view's start-up replay: the records present at start are applied through a deferred replay
 * (./replay.ts) until the view has caught up with the end offsets taken at start, with a progress
 * line each second and metrics; then every input is applied as it comes.
 */

/** An input of the view's reducer; `reset` starts over from an empty view (the snapshot did not match the log). */
export type ReplayInput = ViewInput | { readonly type: 'reset' };

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

/** Records to replay from `seek` (or the start) to the end offsets `targets`. */
export function backlog(targets: readonly RecordPosition[], seek?: readonly RecordPosition[]): number {
  return targets.reduce((sum, target) => {
    const from = seek?.find((position) => position.topic === target.topic && position.partition === target.partition)?.offset ?? 0n;
    return sum + Number(target.offset - from);
  }, 0);
}

/** Whether a state has applied every record before the end offsets `targets`. */
export function caughtUpWith(targets: readonly RecordPosition[]): (state: ViewState) => boolean {
  const targetKeys = targets.map((target) => [`${target.topic}/${target.partition}`, target.offset] as const);
  return (state) => targetKeys.every(([key, offset]) => (state.offsets[key] ?? 0n) >= offset);
}

/** Records per second, or the count itself when no time has passed. */
export const perSecondOf = (records: number, ms: number): number => (ms > 0 ? Math.round(records / (ms / 1000)) : records);

export interface ReplayProgress {
  /** The view's reducer: through the deferred replay until caught up, then `apply`. */
  step(state: ViewState, input: ReplayInput): ViewState;
  /** Watches every state: rejected records, the progress line, the end of the replay, then the live gauges. */
  observe(state: ViewState): void;
  /** Ends the replay now if `state` has caught up (an empty log, a snapshot at the log's end). */
  finishIfCaughtUp(state: ViewState): void;
  /** The replay starts over from an empty view, not from the snapshot. */
  restart(): void;
  /** The state the replay started from (an empty view once restarted). */
  start(): ViewState;
  /** Whether the replay is over. */
  done(): boolean;
}

export function createReplayProgress(options: {
  readonly targets: readonly RecordPosition[];
  readonly start: ViewState;
  readonly fromSnapshot: boolean;
  readonly logger: Logger;
  readonly metrics: ViewMetrics;
  /** Called once, when the replay is over. */
  readonly onReplayed: (replayed: Replayed) => void;
}): ReplayProgress {
  const { targets, logger, metrics } = options;
  const total = targets.reduce((sum, position) => sum + Number(position.offset), 0);
  const caughtUp = caughtUpWith(targets);
  let start = options.start;
  let fromSnapshot = options.fromSnapshot;
  const startedAt = Date.now();
  let replayDone = false;
  let lastInvalid = start.invalid;
  let lastProgressAt = Date.now();
  // The replay in progress (block records deferred), until the view has caught up.
  let replay: DeferredReplay | undefined = createDeferredReplay(start);
  let replayedRecords = 0;
  let skipped = 0;

  const finish = (state: ViewState): void => {
    if (replayDone) return;
    replayDone = true;
    // Caught up before any record (an empty log, a snapshot at the log's end): nothing is deferred.
    replay = undefined;
    const ms = Date.now() - startedAt;
    const done = replayedRecords;
    const perSecond = perSecondOf(done, ms);
    metrics.replayed(state, perSecond);
    metrics.replaySkipped.inc(skipped);
    logger.info(
      { records: done, invalid: state.invalid, skipped, ms, perSecond, pendingBlocks: state.blocks.length, fromSnapshot },
      'view replayed; following live',
    );
    options.onReplayed({ records: done, ms, perSecond, fromSnapshot, skipped });
  };

  return {
    step(state, input) {
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
    },
    observe(state) {
      if (state.invalid > lastInvalid) {
        metrics.invalid.inc(state.invalid - lastInvalid);
        lastInvalid = state.invalid;
        logger.warn({ reason: state.lastInvalid }, 'record rejected by the view');
      }
      if (!replayDone) {
        const now = Date.now();
        if (now - lastProgressAt >= 1000) {
          lastProgressAt = now;
          const done = replayedRecords;
          metrics.progress(total ? (start.applied + start.invalid + done) / total : 1);
          logger.info({ applied: done, of: total, perSecond: Math.round(done / ((now - startedAt) / 1000)) }, 'replaying the view');
          metrics.offsets(state);
        }
        if (caughtUp(state)) finish(state);
        return;
      }
      metrics.live(state);
    },
    finishIfCaughtUp(state) {
      if (total === 0 || caughtUp(state)) finish(state);
    },
    restart() {
      start = initialViewState();
      fromSnapshot = false;
    },
    start: () => start,
    done: () => replayDone,
  };
}
