import { filter, lastValueFrom, tap, type Observable, type Observer } from 'rxjs';
import { mergeGrowth } from '../src/chain/assemble.ts';
import { blockRecords, type BlockRecord } from '../src/records/blocks.ts';
import { flashblockRecord } from '../src/records/flashblocks.ts';
import type { ExecutionOutput } from '../src/chain/execution-output.ts';
import { drainWithin, type Context } from '../src/context.ts';
import { ConfigError, errorMessage } from '../src/errors.ts';
import type { Executor } from '../src/execute/port.ts';
import type { Log, ProduceRecord } from '../src/log/port.ts';
import { createPublisher, type Publisher } from '../src/log/publisher.ts';
import { createOnceLogger } from '../src/obs/logger.ts';
import { concatMapCoalescing } from '../src/rx/coalescing-concat.ts';
import { counter, histogram } from '../src/obs/metrics.ts';
import { sourceEventRecords } from '../src/source/event-records.ts';
import type { Source, SourceEvent, SourceExecution } from '../src/source/port.ts';

/**
 * The ingest topology, the same for every Source adapter (src/source/create.ts):
 *
 *   source -> grew: flashlog.flashblocks (the feed's message, if any)
 *                   -> with receipts (or no executor): flashlog.blocks, flashlog.logs
 *                   -> without: the execution queue -> execute (-> executions: the source's input) -> flashlog.blocks, flashlog.logs
 *          -> replaced: flashlog.chain reorg, flashlog.logs removed: true; the executor hears of it
 *          -> lifecycle: flashlog.chain sealed (a canonical block that sealed a pre-confirmation), safe, finalized;
 *             the executor hears of canonical blocks
 *          -> gap: flashlog.chain gap (blocks the log will never hold), flashlog_ingest_gaps_total and one warning
 *
 * What needs no execution is published as it comes, in the source's order; only the blocks to
 * execute wait in the queue, so a seal or a reorg never waits behind the executions queued.
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
 * `mergeGrowth`), and flashlog.flashblocks still gets every message, as it arrives. A block whose
 * next block is already queued is not executed at all (`flashlog_ingest_superseded_total`): it is
 * sealed by then, and executing it would keep every later block behind the chain (not with the
 * node executor, whose receipts are the sealed block's).
 */
export interface SourceIngestDeps {
  readonly log: Log;
  readonly source: Source;
  /** Finds receipts for `grew` events that carry none (the flashblocks feed). */
  readonly executor?: Executor | undefined;
  /**
   * Where each execution goes as it starts: the input of a source that reconciles
   * (`executions$`, src/source/create.ts), connected by the wiring (streams/ingest.ts).
   */
  readonly executions?: Pick<Observer<SourceExecution>, 'next'> | undefined;
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

/** The ingest's own metrics: block record latency (per source kind), what execution did, and gaps. */
function ingestMetrics(metrics: Context['metrics'], kind: Source['kind']) {
  return {
    latency:
      kind === 'flashblocks'
        ? histogram(metrics, 'flashlog_ingest_latency_seconds', 'frame arrival to block record appended', [], latencyBuckets)
        : histogram(
            metrics,
            'flashlog_blocks_latency_seconds',
            'blocks source: head notification (or poll) to block record appended',
            [],
            latencyBuckets,
          ),
    executionErrors: counter(metrics, 'flashlog_execution_errors_total', 'flashblocks whose execution failed (published without receipts)'),
    coalesced: counter(
      metrics,
      'flashlog_ingest_coalesced_total',
      'flashblocks executed together with a later one of their block because the executor was busy',
    ),
    superseded: counter(
      metrics,
      'flashlog_ingest_superseded_total',
      "flashblocks published without receipts, unexecuted, because a later block's were already queued (the executor was a block behind)",
    ),
    gaps: counter(metrics, 'flashlog_ingest_gaps_total', 'gap records written: ranges of blocks the log will never hold, by reason', [
      'reason',
    ]),
    gapBlocks: counter(metrics, 'flashlog_ingest_gap_blocks_total', 'blocks the log will never hold (in gap records), by reason', [
      'reason',
    ]),
  };
}

type Grew = Extract<SourceEvent, { type: 'grew' }>;

/**
 * When a queued block supersedes an earlier one (see publishSuperseded). Never for the node
 * executor: it reads receipts the node has sealed, a block behind by design, and its records are
 * the sealed receipts.
 */
function supersedeFor(executor: Executor | undefined, skip: (event: Grew) => void) {
  if (executor?.kind === 'node') return undefined;
  return { superseded: (earlier: Grew, later: Grew) => later.block.blockNumber > earlier.block.blockNumber, skip };
}

export function createSourceIngest(ctx: Context, deps: SourceIngestDeps): Ingest {
  const { config, logger, metrics } = ctx;
  const { source, executor, executions } = deps;
  const { latency, executionErrors, coalesced, superseded, gaps, gapBlocks } = ingestMetrics(metrics, source.kind);
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
      const output = (async () => running.execute(block))();
      executions?.next({ block, output });
      return await output;
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

  /** A `grew` event whose receipts the executor must find: it waits in the execution queue. */
  const toExecute = (event: SourceEvent): boolean => event.type === 'grew' && !event.receipts && executor !== undefined;

  function publishBlock(event: Grew, execution: ExecutionOutput | null, by: BlockRecord['executor']): void {
    const records = blockRecords(event.block, execution, by);
    receivedAt.set(records[0]!, event.receivedAt);
    publisher.push(records);
  }

  /** Publishes what needs no execution as it comes, in the source's order; the executor hears of canonical and replaced blocks. */
  function publishNow(event: SourceEvent): void {
    if (event.type === 'grew') {
      if (event.message) publisher.push([flashblockRecord(event.block, event.message, event.receivedAt)]);
      if (!toExecute(event))
        publishBlock(event, event.receipts ? { receipts: [...event.receipts], stateDiff: null } : null, event.receipts ? 'node' : null);
      return;
    }
    publisher.push(sourceEventRecords(event));
    if (event.type === 'gap') {
      const blocks = Number(event.to - event.from + 1n);
      gaps.inc({ reason: event.reason });
      gapBlocks.inc({ reason: event.reason }, blocks);
      logger.warn(
        { from: Number(event.from), to: Number(event.to), blocks, reason: event.reason },
        'ingest: blocks the log will not hold (a gap record on flashlog.chain)',
      );
    } else if (event.type === 'replaced') executor?.onReorg?.(event.blockNumber);
    else if (event.level === 'canonical') executor?.onCanonical?.(event.blockNumber);
  }

  async function executeAndPublish(event: Grew): Promise<void> {
    // Once shutdown started, flashblocks still queued are published without executing them: their
    // transactions reach the log at once instead of holding the exit behind the executor.
    if (ctx.shutdown.signal.aborted) {
      notExecutedAtShutdown++;
      publishBlock(event, null, null);
      return;
    }
    publishBlock(event, await execute(executor!, event.block), executor!.kind);
  }

  /**
   * A block whose next one is already queued behind a busy executor: the sequencer moved on, so
   * the node has sealed it. Executed now, its records would reach the log after the seal, when
   * the view must drop them, and the next block would wait behind it: an executor behind by a
   * block would stay behind, and no block being built would ever be served (CI met this on a
   * loaded machine). Published without receipts instead, and the executor drops its pending
   * state for the block (`onReorg`), so the next block starts from the node's canonical state.
   */
  function publishSuperseded(event: Grew): void {
    superseded.inc();
    warnOnce(
      'superseded',
      { block: Number(event.block.blockNumber), index: event.block.index },
      "the executor is a block behind the feed: a sealed block's flashblocks are published without receipts, and execution resumes at the newest block",
    );
    executor?.onReorg?.(event.block.blockNumber);
    // The source still learns its transactions (no receipts), so reconciling the sealed block compares them all.
    executions?.next({ block: event.block, output: Promise.resolve({ receipts: [], stateDiff: null }) });
    publishBlock(event, null, null);
  }

  /** Two `grew` events to execute, of one block, the later continuing the earlier: one event. */
  const mergeQueued = (earlier: Grew, later: Grew): Grew | null => {
    const block = mergeGrowth(earlier.block, later.block);
    return block ? { ...later, block, receivedAt: earlier.receivedAt } : null;
  };

  const published$ = source.events$.pipe(
    tap(publishNow),
    filter((event): event is Grew => toExecute(event)),
    concatMapCoalescing(executeAndPublish, mergeQueued, (count) => coalesced.inc(count), supersedeFor(executor, publishSuperseded)),
  );

  return {
    events$: source.events$,
    publisher,
    run() {
      const finished = (async () => {
        try {
          await lastValueFrom(published$, { defaultValue: undefined });
        } catch (error) {
          // The source stopped on a setting-like fault (its node became another chain): what it
          // published before is still appended, then the error ends the command.
          if (error instanceof ConfigError) await publisher.flush();
          throw error;
        }
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
