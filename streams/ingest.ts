import {
  EMPTY,
  Observable,
  concatMap,
  filter,
  from,
  fromEvent,
  lastValueFrom,
  map,
  merge,
  mergeMap,
  of,
  scan,
  share,
  takeUntil,
} from 'rxjs';
import { createPayloadBlocks } from '../src/wire/payload-blocks.ts';
import { initialSequencerState, step, type SequencerEvent, type SequencerState } from '../src/chain/sequencer.ts';
import { blockRecords, flashblockRecord } from '../src/chain/records.ts';
import type { Context } from '../src/context.ts';
import { ConfigError, errorMessage } from '../src/errors.ts';
import type { ExecutionOutput, Executor } from '../src/execute/port.ts';
import { openLog } from '../src/log/open.ts';
import type { Log } from '../src/log/port.ts';
import { createPublisher, type Publisher } from '../src/log/publisher.ts';
import type { Flashblock } from '../src/schemas/flashblock.ts';
import { createOnceLogger } from '../src/obs/logger.ts';
import { counter, gauge, histogram } from '../src/obs/metrics.ts';
import { distinctRecent } from '../src/rx/distinct-recent.ts';
import { webSocket$, type WebSocketEvent } from '../src/rx/websocket.ts';
import { decodeFrame } from '../src/wire/frame.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { warnIfUpstreamBehind } from './node-status.ts';
import { createExecution } from './reconcile.ts';
import { blocksSettings, runBlocksIngest, startLifecycle } from './ingest-blocks.ts';

/**
 * The ingest topology:
 *
 *   ws (1..n) -> decode -> de-dup across upstreams -> sequence+assemble -> publish flashblock
 *                                                                      -> execute -> publish block, logs
 *   canonical heads ------------------------------^ (optional)
 */
export interface IngestDeps {
  readonly log: Log;
  readonly urls: readonly string[];
  readonly executor?: Executor;
  /** Canonical head numbers from the upstream, when known (releases held flashblocks). */
  readonly canonical$?: Observable<bigint>;
  /** Frames from elsewhere (tests, replays) in addition to the URLs. */
  readonly frames$?: Observable<WebSocketEvent>;
}

export interface Ingest {
  /** Every sequencer event, for composition (the view in `run`, stats lines). */
  readonly events$: Observable<SequencerEvent>;
  readonly publisher: Publisher;
  /** Runs until shutdown; resolves once everything accepted is appended. */
  run(): Promise<void>;
}

export function createIngest(ctx: Context, deps: IngestDeps): Ingest {
  const { config, logger, metrics } = ctx;
  const frames = counter(metrics, 'flashlog_ingest_frames_total', 'frames received', ['upstream']);
  const rejected = counter(metrics, 'flashlog_ingest_rejected_total', 'flashblocks or frames dropped, by reason', ['reason']);
  const accepted = counter(metrics, 'flashlog_ingest_accepted_total', 'flashblocks accepted', ['kind']);
  const buffered = counter(metrics, 'flashlog_ingest_buffered_total', 'flashblocks held until their parent is canonical');
  const connects = counter(metrics, 'flashlog_ws_connects_total', 'upstream connections opened', ['upstream']);
  const disconnects = counter(metrics, 'flashlog_ws_disconnects_total', 'upstream connections lost', ['upstream']);
  const executionErrors = counter(
    metrics,
    'flashlog_execution_errors_total',
    'flashblocks whose execution failed (published without receipts)',
  );
  const head = gauge(metrics, 'flashlog_ingest_block_number', 'block number of the latest accepted flashblock');
  const headIndex = gauge(metrics, 'flashlog_ingest_flashblock_index', 'index of the latest accepted flashblock');
  const latency = histogram(
    metrics,
    'flashlog_ingest_latency_seconds',
    'frame arrival to block record appended',
    [],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const endOfSequence = counter(
    metrics,
    'flashlog_ingest_end_of_sequence_total',
    'X Layer end-of-sequence frames (a bare payload_id; no flashblock in them)',
  );
  const warnOnce = createOnceLogger(logger);
  const arrivals = new Map<string, number>();
  // Numbers OP-specs messages after index 0, which carry no block number (src/chain/payload-blocks.ts).
  const payloadBlocks = createPayloadBlocks();

  const publisher = createPublisher(deps.log, {
    logger,
    metrics,
    maxQueued: config.produceBufferRecords,
    onAppended: (records) => {
      const now = Date.now();
      for (const record of records) {
        if (record.topic !== 'flashlog.blocks') continue;
        const key = /"blockNumber":"(0x[0-9a-f]+)","index":(\d+)/.exec(record.value);
        const arrived = key ? arrivals.get(`${key[1]}/${key[2]}`) : undefined;
        if (arrived !== undefined) {
          latency.observe((now - arrived) / 1000);
          arrivals.delete(`${key![1]}/${key![2]}`);
        }
      }
    },
  });

  const stop$ = fromEvent(ctx.shutdown.signal, 'abort');
  const sources = deps.urls.map((url) =>
    webSocket$(url, {
      pingIntervalMs: config.pingIntervalMs,
      reconnectMinMs: config.reconnectMinMs,
      reconnectMaxMs: config.reconnectMaxMs,
      maxPayloadBytes: Math.max(config.maxFrameBytes * 4, 64 * 1024 * 1024),
    }),
  );
  const socketEvents$ = merge(...sources, deps.frames$ ?? EMPTY).pipe(takeUntil(stop$), share());

  const decoded$ = socketEvents$.pipe(
    mergeMap((event) => {
      if (event.type === 'connected') {
        connects.inc({ upstream: event.url });
        logger.info({ upstream: event.url }, 'upstream connected');
        return EMPTY;
      }
      if (event.type === 'disconnected') {
        disconnects.inc({ upstream: event.url });
        logger.warn({ upstream: event.url, reason: event.reason, retryInMs: event.retryInMs }, 'upstream disconnected; reconnecting');
        return EMPTY;
      }
      frames.inc({ upstream: event.url });
      const result = decodeFrame(event.data, { maxBytes: config.maxFrameBytes, payloadBlocks });
      if (!result.ok && result.reason === 'end_of_sequence') {
        endOfSequence.inc();
        return EMPTY;
      }
      if (!result.ok) {
        rejected.inc({ reason: result.reason });
        warnOnce(result.reason, { upstream: event.url, detail: result.detail, bytes: event.data.byteLength }, 'frame dropped');
        return EMPTY;
      }
      return of({ flashblock: result.flashblock, json: result.json, receivedAt: event.receivedAt });
    }),
    distinctRecent(
      ({ flashblock }) => `${flashblock.metadata.block_number}/${flashblock.index}/${flashblock.payload_id}`,
      4096,
      () => rejected.inc({ reason: 'duplicate' }),
    ),
  );

  type Arrival = { flashblock: Flashblock; json: Record<string, unknown>; receivedAt: number };
  const received = new Map<object, Arrival>();
  const inputs$ = merge(
    decoded$.pipe(
      map((arrival) => {
        received.set(arrival.flashblock, arrival);
        return { type: 'flashblock' as const, flashblock: arrival.flashblock };
      }),
    ),
    (deps.canonical$ ?? EMPTY).pipe(map((blockNumber) => ({ type: 'canonical' as const, blockNumber }))),
  );

  const events$ = inputs$.pipe(
    scan<Parameters<typeof step>[1], { state: SequencerState; events: SequencerEvent[] }>((acc, input) => step(acc.state, input), {
      state: initialSequencerState(config.aheadBlocks),
      events: [],
    }),
    concatMap(({ events }) => from(events)),
    share(),
  );

  const published$ = events$.pipe(
    filter((event) => {
      if (event.type === 'accepted') return true;
      const arrival = received.get(event.flashblock);
      if (event.type === 'rejected') {
        received.delete(event.flashblock);
        rejected.inc({ reason: event.reason });
        warnOnce(
          event.reason,
          { block: event.flashblock.metadata.block_number, index: event.flashblock.index, detail: event.detail },
          'flashblock dropped',
        );
      } else if (arrival) {
        buffered.inc();
      }
      return false;
    }),
    concatMap(async (event) => {
      if (event.type !== 'accepted') return;
      const arrival = received.get(event.flashblock);
      received.delete(event.flashblock);
      const receivedAt = arrival?.receivedAt ?? Date.now();
      const { block } = event;
      accepted.inc({ kind: event.kind });
      head.set(Number(block.blockNumber));
      headIndex.set(block.index);
      if (event.skippedBlocks > 0n) {
        rejected.inc({ reason: 'missed_block' }, Number(event.skippedBlocks));
        logger.warn({ block: Number(block.blockNumber), missed: Number(event.skippedBlocks) }, 'blocks missing from the feed');
      }
      arrivals.set(`0x${block.blockNumber.toString(16)}/${block.index}`, receivedAt);
      if (arrivals.size > 10_000) arrivals.clear();
      publisher.push([flashblockRecord(block, arrival?.json ?? event.flashblock, receivedAt)]);
      let execution: ExecutionOutput | null = null;
      if (deps.executor) {
        try {
          execution = await deps.executor.execute(block);
        } catch (error) {
          executionErrors.inc();
          warnOnce(
            `execution:${errorMessage(error).slice(0, 80)}`,
            { block: Number(block.blockNumber), index: block.index, err: errorMessage(error) },
            'execution failed; publishing the block without receipts',
          );
        }
      }
      publisher.push(blockRecords(block, execution, deps.executor?.kind ?? null));
    }),
  );

  return {
    events$,
    publisher,
    async run() {
      await lastValueFrom(published$, { defaultValue: undefined });
      await publisher.flush();
    },
  };
}

export const ingestCommand: Command = {
  name: 'ingest',
  summary:
    "read flashblocks feeds, or a node's 200 ms blocks (--source blocks), into the log (flashlog.blocks, flashlog.logs, flashlog.chain)",
  usage:
    'flashlog ingest --ws URL [--ws URL ...] [--kafka-brokers host:port] [options]\n       flashlog ingest --source blocks --rpc URL [--rpc-ws URL] [--consensus-rpc URL] [options]',
  settings: [
    ...serviceSettings,
    ...logSettings,
    'ws',
    'maxFrameBytes',
    'pingIntervalMs',
    'reconnectMinMs',
    'reconnectMaxMs',
    'aheadBlocks',
    'produceBufferRecords',
    'rpc',
    'rpcTimeoutMs',
    'executor',
    'stateDiff',
    'canonicalPollMs',
    'source',
    ...blocksSettings,
  ],
  defaults: { metricsPort: '9464' },
  longRunning: true,
  async run(ctx) {
    const source = ctx.config.source ?? (ctx.config.ws ? 'flashblocks' : ctx.config.rpc ? 'blocks' : 'flashblocks');
    if (source === 'blocks') return runBlocksIngest(ctx);
    const urls = ctx.config.ws;
    if (!urls || urls.length === 0)
      throw new ConfigError(
        "--ws (FLASHLOG_WS): got nothing, expected at least one ws:// or wss:// URL (or --source blocks --rpc URL for a node's 200 ms blocks)",
      );
    void warnIfUpstreamBehind(ctx.config.rpc, ctx.logger);
    const log = await openLog(ctx.config, ctx.logger);
    ctx.shutdown.register('log', () => log.close());
    // Receipts (--executor) and reconciliation with canonical heads from --rpc (streams/reconcile.ts).
    const execution = await createExecution(ctx, { rpcUrl: ctx.config.rpc });
    ctx.shutdown.register('execution', () => execution.close());
    const ingest = createIngest(ctx, { log, urls, executor: execution.executor, canonical$: execution.canonical$ });
    execution.start(ingest.publisher);
    startLifecycle(ctx, ingest.publisher, ctx.config.rpc);
    ctx.shutdown.register('publisher', () => ingest.publisher.flush());
    ctx.logger.info({ upstreams: urls, log: log.kind }, 'ingest started');
    await ingest.run();
    return 0;
  },
};
