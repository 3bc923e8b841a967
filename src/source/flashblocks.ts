import { EMPTY, concatMap, finalize, from, map, merge, mergeMap, of, scan, share, takeUntil, type Observable } from 'rxjs';
import { initialSequencerState, step, type SequencerEvent, type SequencerInput, type SequencerState } from '../chain/sequencer.ts';
import type { Logger } from '../obs/logger.ts';
import { createOnceLogger } from '../obs/logger.ts';
import { counter, gauge, type Registry } from '../obs/metrics.ts';
import { distinctRecent } from '../rx/distinct-recent.ts';
import { webSocket$, type WebSocketEvent, type WebSocketTiming } from '../rx/upstream-socket.ts';
import type { Flashblock } from '../schemas/flashblock.ts';
import { decodeFrame } from '../wire/frame.ts';
import { createPayloadBlocks } from '../wire/payload-blocks.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Source, SourceEvent } from './port.ts';
import { createFeedBackfill } from './sealed-backfill.ts';

/**
 * The flashblocks source: one or more flashblocks feeds (Base before Denim, Unichain, X Layer),
 * the first adapter of the Source port.
 *
 *   ws (1..n) -> decode -> de-dup across upstreams -> sequence+assemble -> grew
 *   canonical heads ------------------------------^ (optional: releases held flashblocks)
 *
 * Each accepted flashblock is one `grew` event: the block assembled so far (receipts unknown:
 * the caller's executor finds them) and the feed's message, for flashlog.flashblocks. Reorgs and
 * canonical blocks are found by reconciling with the upstream's canonical heads
 * (`canonical-heads.ts`), not by the feed: `create.ts` merges those events with this adapter's
 * `grew` events into the one flashblocks Source, and feeds the heads' numbers to `canonical$`.
 *
 * Bad frames, duplicates, gaps and blocks missing from the feed are dropped with a metric
 * (`flashlog_ingest_rejected_total{reason}`) and one log line per reason. Whole blocks the feed
 * never showed (a restart: from the log's last block; a cut feed) are read sealed from the node
 * when `backfill` is given (sealed-backfill.ts), or written as a `gap`: the log never goes silent.
 */
export interface FlashblocksSourceOptions {
  readonly urls: readonly string[];
  /** Frames from elsewhere (tests, replays) in addition to the URLs. */
  readonly frames$?: Observable<WebSocketEvent> | undefined;
  /** Canonical head numbers from the upstream, when known (releases held flashblocks). */
  readonly canonical$?: Observable<bigint> | undefined;
  readonly maxFrameBytes: number;
  /** Blocks a flashblock may run ahead of the canonical head before it is dropped. */
  readonly aheadBlocks: number;
  readonly ws: WebSocketTiming;
  readonly stop$: Observable<unknown>;
  readonly logger: Logger;
  readonly metrics: Registry;
  /**
   * Blocks the feed never showed (a restart, a cut feed) read sealed from the node (sealed-backfill.ts);
   * `resumeFrom` is the newest block the log holds (null for a new log). Without it they are counted and logged only.
   */
  readonly backfill?: { readonly rpc: Upstream; readonly maxBlocks: number; readonly resumeFrom: bigint | null } | undefined;
}

type Arrival = { readonly flashblock: Flashblock; readonly json: Record<string, unknown>; readonly receivedAt: number };

export function createFlashblocksSource(options: FlashblocksSourceOptions): Source {
  const { logger, metrics } = options;
  const frames = counter(metrics, 'flashlog_ingest_frames_total', 'frames received', ['upstream']);
  const rejected = counter(metrics, 'flashlog_ingest_rejected_total', 'flashblocks or frames dropped, by reason', ['reason']);
  const accepted = counter(metrics, 'flashlog_ingest_accepted_total', 'flashblocks accepted', ['kind']);
  const buffered = counter(metrics, 'flashlog_ingest_buffered_total', 'flashblocks held until their parent is canonical');
  const connects = counter(metrics, 'flashlog_ws_connects_total', 'upstream connections opened', ['upstream']);
  const disconnects = counter(metrics, 'flashlog_ws_disconnects_total', 'upstream connections lost', ['upstream']);
  const head = gauge(metrics, 'flashlog_ingest_block_number', 'block number of the latest accepted flashblock');
  const headIndex = gauge(metrics, 'flashlog_ingest_flashblock_index', 'index of the latest accepted flashblock');
  const endOfSequence = counter(
    metrics,
    'flashlog_ingest_end_of_sequence_total',
    'X Layer end-of-sequence frames (a bare payload_id; no flashblock in them)',
  );
  const warnOnce = createOnceLogger(logger);
  let joinLogged = false;
  let stopped = false;
  const backfill = options.backfill;
  // Whole blocks the feed never showed, read sealed from the node before the block that follows them.
  const fillBefore = backfill
    ? createFeedBackfill({ ...backfill, stopped: () => stopped, logger, metrics })
    : (events: SourceEvent[]) => from(events);
  // Numbers OP-specs messages after index 0, which carry no block number (src/wire/payload-blocks.ts).
  const payloadBlocks = createPayloadBlocks();

  const sockets = options.urls.map((url) =>
    webSocket$(url, { ...options.ws, maxPayloadBytes: Math.max(options.maxFrameBytes * 4, 64 * 1024 * 1024) }),
  );
  const socketEvents$ = merge(...sockets, options.frames$ ?? EMPTY).pipe(takeUntil(options.stop$), share());

  const decoded$: Observable<Arrival> = socketEvents$.pipe(
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
      const result = decodeFrame(event.data, { maxBytes: options.maxFrameBytes, payloadBlocks });
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

  /** Arrivals by flashblock, from decoding until the sequencer accepts or rejects it (held ones wait). */
  const received = new Map<object, Arrival>();
  const inputs$: Observable<SequencerInput> = merge(
    decoded$.pipe(
      map((arrival) => {
        received.set(arrival.flashblock, arrival);
        return { type: 'flashblock' as const, flashblock: arrival.flashblock };
      }),
    ),
    (options.canonical$ ?? EMPTY).pipe(map((blockNumber) => ({ type: 'canonical' as const, blockNumber }))),
  );

  /** A sequencer event as a Source event: `grew` for an accepted flashblock, else counted and dropped. */
  const toSourceEvent = (event: SequencerEvent): SourceEvent[] => {
    const arrival = received.get(event.flashblock);
    if (event.type === 'rejected') {
      received.delete(event.flashblock);
      rejected.inc({ reason: event.reason });
      // Joining a feed mid-block is what every fresh start does, not a fault of the feed.
      if (event.reason === 'joined_mid_block') {
        if (!joinLogged) logger.info({ block: event.flashblock.metadata.block_number, index: event.flashblock.index }, event.detail);
        joinLogged = true;
        return [];
      }
      warnOnce(
        event.reason,
        { block: event.flashblock.metadata.block_number, index: event.flashblock.index, detail: event.detail },
        'flashblock dropped',
      );
      return [];
    }
    if (event.type === 'buffered') {
      if (arrival) buffered.inc();
      return [];
    }
    received.delete(event.flashblock);
    const { block } = event;
    accepted.inc({ kind: event.kind });
    head.set(Number(block.blockNumber));
    headIndex.set(block.index);
    if (event.skippedBlocks > 0n) {
      rejected.inc({ reason: 'missed_block' }, Number(event.skippedBlocks));
      logger.warn(
        { block: Number(block.blockNumber), missed: Number(event.skippedBlocks), backfill: backfill !== undefined },
        backfill ? 'blocks missing from the feed; reading them from the node' : 'blocks missing from the feed',
      );
    }
    return [
      {
        type: 'grew',
        block,
        receipts: null,
        receivedAt: arrival?.receivedAt ?? Date.now(),
        message: arrival?.json ?? (event.flashblock as unknown as Record<string, unknown>),
      },
    ];
  };

  return {
    kind: 'flashblocks',
    events$: inputs$.pipe(
      scan<SequencerInput, { state: SequencerState; events: SequencerEvent[] }>((acc, input) => step(acc.state, input), {
        state: initialSequencerState(options.aheadBlocks),
        events: [],
      }),
      concatMap(({ events }) => fillBefore(events.flatMap(toSourceEvent))),
      finalize(() => {
        stopped = true;
      }),
      share(),
    ),
  };
}
