import { counter, gauge, type Counter, type Registry } from '../obs/metrics.ts';
import type { ViewState } from './state.ts';

/** The view's Prometheus metrics: what it applied and rejected, its replay, its pending blocks, its snapshot. */
export interface ViewMetrics {
  readonly records: Counter<string>;
  readonly invalid: Counter<string>;
  readonly replaySkipped: Counter<string>;
  readonly snapshotFallbacks: Counter<string>;
  /** The start-up replay is over: its rate, a progress of 1, the offsets and pending blocks it ended at. */
  replayed(state: ViewState, perSecond: number): void;
  /** A fraction of the start-up replay applied. */
  progress(ratio: number): void;
  /** The next offset the view will apply, per topic and partition. */
  offsets(state: ViewState): void;
  /** A live state: pending blocks, the latest pending number, and the offsets when the view changed. */
  live(state: ViewState): void;
  /** Counts the records applied from `applied` on, state by state. */
  countApplied(applied: number): (state: ViewState) => void;
}

export function createViewMetrics(registry: Registry): ViewMetrics {
  const appliedOffset = gauge(registry, 'flashlog_view_applied_offset', 'next offset the view will apply, per topic and partition', [
    'topic',
    'partition',
  ]);
  const records = counter(registry, 'flashlog_view_records_total', 'records applied to the view');
  const invalid = counter(registry, 'flashlog_view_invalid_records_total', 'records the view rejected by schema');
  const pendingBlocks = gauge(registry, 'flashlog_view_pending_blocks', 'pre-confirmed blocks above canonical in the view');
  const pendingNumber = gauge(registry, 'flashlog_view_pending_block_number', 'number of the latest pre-confirmed block');
  // The start-up replay's.
  const replay = {
    rate: gauge(registry, 'flashlog_view_replay_records_per_second', 'records per second of the start-up replay'),
    progress: gauge(registry, 'flashlog_view_replay_progress_ratio', 'fraction of the start-up replay applied (1 once live)'),
    skipped: counter(
      registry,
      'flashlog_view_replay_skipped_records_total',
      'block records the start-up replay never parsed or validated: their block was superseded before the end of the replay',
    ),
  };
  const snapshotFallbacks = counter(
    registry,
    'flashlog_view_snapshot_fallbacks_total',
    'restarts that replayed the whole log although a snapshot existed',
    ['reason'],
  );
  const offsets = (state: ViewState) => {
    for (const [key, offset] of Object.entries(state.offsets)) {
      const slash = key.lastIndexOf('/');
      appliedOffset.set({ topic: key.slice(0, slash), partition: key.slice(slash + 1) }, Number(offset));
    }
  };
  return {
    records,
    invalid,
    replaySkipped: replay.skipped,
    snapshotFallbacks,
    replayed(state, perSecond) {
      replay.rate.set(perSecond);
      replay.progress.set(1);
      offsets(state);
      pendingBlocks.set(state.blocks.length);
    },
    progress: (ratio) => replay.progress.set(ratio),
    offsets,
    live(state) {
      pendingBlocks.set(state.blocks.length);
      const latest = state.blocks[state.blocks.length - 1];
      if (latest) pendingNumber.set(Number(latest.number));
      if (state.change.type !== 'none') offsets(state);
    },
    countApplied(applied) {
      return (state) => {
        if (state.applied > applied) records.inc(state.applied - applied);
        applied = state.applied;
      };
    },
  };
}
