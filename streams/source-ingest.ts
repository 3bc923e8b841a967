import { EMPTY, lastValueFrom, merge, tap, type Observable } from 'rxjs';
import { mergeGrowth } from '../src/chain/assemble.ts';
import { blockRecords } from '../src/records/blocks.ts';
import { flashblockRecord } from '../src/records/flashblocks.ts';
import type { ExecutionOutput } from '../src/chain/execution-output.ts';
import { drainWithin, type Context } from '../src/context.ts';
import { errorMessage } from '../src/errors.ts';
import type { Executor } from '../src/execute/port.ts';
import type { Log, ProduceRecord } from '../src/log/port.ts';
import { createPublisher, type Publisher } from '../src/log/publisher.ts';
import { createOnceLogger } from '../src/obs/logger.ts';
import { concatMapCoalescing } from '../src/rx/coalescing-concat.ts';
import { counter, histogram } from '../src/obs/metrics.ts';
import { sourceEventRecords } from '../src/source/event-records.ts';
import type { Source, SourceEvent } from '../src/source/port.ts';

/**
 * The ingest topology, the same for every Source adapter (src/source/):
 *
 *   source (grew | replaced | lifecycle) -> grew: flashlog.flashblocks (feed message, if any, at once)
 *                                                 -> execute (when the source has no receipts) -> flashlog.blocks, flashlog.logs
 *                                         -> replaced: flashlog.chain reorg, flashlog.logs removed: true
 *   lifecycle$ (safe / finalized) ------> flashlog.chain
 *
 * Latency (`flashlog_ingest_latency_seconds` for the flashblocks feed, `flashlog_blocks_latency_seconds`
 * for the blocks source) runs from when the source received a block to when its flashlog.blocks
 * record is appended: the record pushed is remembered with its arrival time.
 *
 * Execution may fall behind the feed (a slow executor, a loaded machine). The flashblocks of one
 * block that queue behind it meanwhile are then executed once, as the block so far (the newest
 * pre-confirmation soonest, `flashlog_ingest_coalesced_total`), not one by one ever later: each
 * block record then covers the new transactions of every flashblock it stands for, and every log
 * is still published once. Flashblocks that carry their receipts are never merged (see
 * `mergeGrowth`), and flashlog.flashblocks still gets every message, as it arrives.
 */
export interface SourceIngestDeps {
  readonly log: Log;
  readonly source: Source;
  /** Finds receipts for `grew` events that carry none (the flashblocks feed). */
  readonly executor?: Executor | undefined;
  /** Safe / finalized heads, published as they come, apart from the source's order. */
  readonly lifecycle$?: Observable<SourceEvent> | undefined;
}

export interface Ingest {
  /** Every event of the source, for composition (stats lines). */
  readonly events$: Observable<SourceEvent>;
  readonly publisher: Publisher;
  /**
   * Runs until shutdown; resolves once everything accepted is appended, or --drain-timeout-ms after
   * shutdown started (what is still in flight then is abandoned, with one log line).
   */
  run(): Promise<void>;
}

const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createSourceIngest(ctx: Context, deps: SourceIngestDeps): Ingest {
  const { config, logger, metrics } = ctx;
  const { source, executor } = deps;
  const latency =
    source.kind === 'flashblocks'
      ? histogram(metrics, 'flashlog_ingest_latency_seconds', 'frame arrival to block record appended', [], latencyBuckets)
      : histogram(
          metrics,
          'flashlog_blocks_latency_seconds',
          'blocks source: head notification (or poll) to block record appended',
          [],
          latencyBuckets,
        );
  const executionErrors = counter(
    metrics,
    'flashlog_execution_errors_total',
    'flashblocks whose execution failed (published without receipts)',
  );
  const coalesced = counter(
    metrics,
    'flashlog_ingest_coalesced_total',
    'flashblocks executed together with a later one of their block because the executor was busy',
  );
  const warnOnce = createOnceLogger(logger);
  /** Each block record pushed, with when its block was received; observed once appended. */
  const receivedAt = new WeakMap<ProduceRecord, number>();
  const publisher = createPublisher(deps.log, {
    logger,
    metrics,
    maxQueued: config.produceBufferRecords,
    onAppended: (records) => {
      const now = Date.now();
      for (const record of records) {
        const at = receivedAt.get(record);
        if (at !== undefined) latency.observe(Math.max(0, now - at) / 1000);
      }
    },
  });

  /** Receipts for a block whose source has none, from the executor; null when execution failed. */
  async function execute(running: Executor, block: Extract<SourceEvent, { type: 'grew' }>['block']): Promise<ExecutionOutput | null> {
    try {
      return await running.execute(block);
    } catch (error) {
      executionErrors.inc();
      warnOnce(
        `execution:${errorMessage(error).slice(0, 80)}`,
        { block: Number(block.blockNumber), index: block.index, err: errorMessage(error) },
        'execution failed; publishing the block without receipts',
      );
      return null;
    }
  }

  let notExecutedAtShutdown = 0;

  async function publish(event: SourceEvent): Promise<void> {
    if (event.type !== 'grew') {
      publisher.push(sourceEventRecords(event));
      return;
    }
    // Once shutdown started, flashblocks still queued are published without executing them: their
    // transactions reach the log at once instead of holding the exit behind the executor.
    const skip = executor !== undefined && !event.receipts && ctx.shutdown.signal.aborted;
    if (skip) notExecutedAtShutdown++;
    // Awaited only when there is something to wait for: no extra turn per block without an executor.
    const execution = event.receipts
      ? { receipts: [...event.receipts], stateDiff: null }
      : executor && !skip
        ? await execute(executor, event.block)
        : null;
    const records = blockRecords(event.block, execution, event.receipts ? 'node' : skip ? null : (executor?.kind ?? null));
    receivedAt.set(records[0]!, event.receivedAt);
    publisher.push(records);
  }

  /** Two `grew` events to execute, of one block, the later continuing the earlier: one event. */
  const mergeQueued = (earlier: SourceEvent, later: SourceEvent): SourceEvent | null => {
    if (earlier.type !== 'grew' || later.type !== 'grew' || earlier.receipts || later.receipts || !executor) return null;
    const block = mergeGrowth(earlier.block, later.block);
    return block ? { ...later, block, receivedAt: earlier.receivedAt } : null;
  };

  const published$ = merge(
    source.events$.pipe(
      tap((event) => {
        if (event.type === 'grew' && event.message) publisher.push([flashblockRecord(event.block, event.message, event.receivedAt)]);
      }),
      concatMapCoalescing(publish, mergeQueued, (count) => coalesced.inc(count)),
    ),
    (deps.lifecycle$ ?? EMPTY).pipe(tap((event) => publisher.push(sourceEventRecords(event)))),
  );

  return {
    events$: source.events$,
    publisher,
    run() {
      const finished = (async () => {
        await lastValueFrom(published$, { defaultValue: undefined });
        await publisher.flush();
        if (notExecutedAtShutdown > 0)
          logger.info({ flashblocks: notExecutedAtShutdown }, 'shutdown: flashblocks queued at shutdown were published without receipts');
      })();
      // Bounded: an execution or an append that does not finish (an EDR fork being built, a log
      // that is down) must not hold the process past --drain-timeout-ms after SIGTERM.
      return drainWithin(finished, {
        signal: ctx.shutdown.signal,
        timeoutMs: config.drainTimeoutMs,
        onAbandoned: () =>
          logger.warn(
            { drainTimeoutMs: config.drainTimeoutMs, queuedRecords: publisher.queued },
            'shutdown: work in flight did not finish within --drain-timeout-ms; abandoned',
          ),
      });
    },
  };
}
