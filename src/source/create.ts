import { EMPTY, concatMap, exhaustMap, from, fromEvent, ignoreElements, map, merge, share, takeUntil, timer, type Observable } from 'rxjs';
import type { LoggedBlock } from '../chain/resume.ts';
import type { SourceKind } from '../config/source-mode.ts';
import type { Context } from '../context.ts';
import { ConfigError } from '../errors.ts';
import { createUpstream } from '../jsonrpc/upstream.ts';
import type { WebSocketEvent } from '../rx/upstream-socket.ts';
import { createBlocksSource } from './blocks.ts';
import { createCanonicalHeads } from './canonical-heads.ts';
import { createFlashblocksSource } from './flashblocks.ts';
import type { Source, SourceEvent, SourceExecution } from './port.ts';
import { safeHeads$ } from './safe-heads.ts';

/**
 * The one factory of the Source port: the source of a source mode (src/config/source-mode.ts),
 * with the node's safe and finalized heads merged in. Either kind emits `grew`, `lifecycle` and
 * `replaced` events; streams/ingest.ts publishes them the same way.
 *
 *   flashblocks: ws (1..n) -> flashblocks.ts -> grew (receipts: the ingest's executor)
 *                --rpc canonical heads + executions$ -> canonical-heads.ts -> lifecycle canonical (sealed) | replaced
 *                                                            -> the feed's sequencer (held flashblocks released)
 *   blocks:      node newHeads / poll -> blocks.ts -> grew (receipts from the node) | replaced
 *   both:        node safe/finalized tags (or optimism_syncStatus) -> safe-heads.ts -> lifecycle safe | finalized
 *
 * Either kind resumes where the log ends (`resume`: the blocks source walks back to the log's last
 * block, the flashblocks source reads the blocks its feed did not show from the node), and either
 * stops once the node is another chain than the log's (`verifyChain`, checked all the time).
 *
 * A flashblocks chain is reconciled with canonical heads only when its blocks are executed
 * (`reconcile`): a reorg withdraws the logs execution found.
 */
export interface SourceEndpoints {
  readonly source: SourceKind;
  /** Flashblocks feeds (the flashblocks source). */
  readonly feedUrls?: readonly string[] | undefined;
  /** The node's JSON-RPC: blocks and receipts (blocks source), canonical heads (flashblocks), safe/finalized heads (both). */
  readonly rpcUrl?: string | undefined;
  /** The node's WebSocket JSON-RPC (`newHeads`, blocks source). */
  readonly rpcWsUrl?: string | undefined;
}

export interface CreateSourceOptions {
  /** Flashblocks: reconcile with canonical heads from `rpcUrl` (the ingest executes every block). */
  readonly reconcile?: boolean;
  /** Flashblocks: frames from elsewhere (tests, replays) in addition to the feeds. */
  readonly frames$?: Observable<WebSocketEvent> | undefined;
  /** How long a canonical block that only extends its pre-confirmation waits for the rest (default 3 s). */
  readonly prefixGraceMs?: number;
  /** The newest blocks the log holds, newest first (src/chain/resume.ts): a restarted ingest starts there. */
  readonly resume?: readonly LoggedBlock[] | undefined;
  /**
   * Throws a ConfigError once the node is another chain than the log's (src/log/chain-stamp.ts,
   * createChainGuard): checked every CHAIN_CHECK_MS and before the blocks source acts on a head
   * that went backwards, a deep reorg or a long gap. The source's events then error with it.
   */
  readonly verifyChain?: (() => Promise<void>) | undefined;
  /**
   * Flashblocks with `reconcile`: each execution of a `grew` block as it starts (the ingest's), read by
   * the canonical heads while the source's events are subscribed. Other sources take none.
   */
  readonly executions$?: Observable<SourceExecution> | undefined;
}

/** How often the node's chain (chain id, genesis hash) is held against the log's while ingesting. */
export const CHAIN_CHECK_MS = 2000;

/**
 * Emits nothing; errors with the guard's ConfigError once the node is another chain. A node that
 * does not answer is asked again at the next check (the sources wait for it anyway).
 */
function chainWatch$(verifyChain: () => Promise<void>): Observable<never> {
  return timer(CHAIN_CHECK_MS, CHAIN_CHECK_MS).pipe(
    exhaustMap(() =>
      from(
        verifyChain().catch((error: unknown) => {
          if (error instanceof ConfigError) throw error;
        }),
      ),
    ),
    ignoreElements(),
  );
}

export function createSource(ctx: Context, endpoints: SourceEndpoints, options: CreateSourceOptions = {}): Source {
  const { config, logger, metrics } = ctx;
  const stop$ = fromEvent(ctx.shutdown.signal, 'abort');
  const ws = { pingIntervalMs: config.pingIntervalMs, reconnectMinMs: config.reconnectMinMs, reconnectMaxMs: config.reconnectMaxMs };
  const rpc = endpoints.rpcUrl ? createUpstream(endpoints.rpcUrl, { timeoutMs: config.rpcTimeoutMs }) : undefined;
  const lifecycle$: Observable<SourceEvent> = rpc
    ? safeHeads$({
        rpc,
        consensus: config.consensusRpc ? createUpstream(config.consensusRpc, { timeoutMs: config.rpcTimeoutMs }) : undefined,
        pollMs: config.lifecyclePollMs,
        stop$,
        logger,
        metrics,
      })
    : EMPTY;
  const watch$ = options.verifyChain ? chainWatch$(options.verifyChain).pipe(takeUntil(stop$)) : EMPTY;

  if (endpoints.source === 'blocks') {
    if (!rpc)
      throw new ConfigError(
        "--rpc (FLASHLOG_RPC): got nothing, expected the node's http:// or https:// JSON-RPC URL (--source blocks reads blocks and receipts from it)",
      );
    const blocks = createBlocksSource({
      rpc,
      wsUrl: endpoints.rpcWsUrl,
      pollMs: config.blocksPollMs,
      maxHeld: config.maxReorgBlocks,
      maxWalkBlocks: config.maxBackfillBlocks,
      ws,
      stop$,
      logger,
      metrics,
      resume: options.resume,
      verifyChain: options.verifyChain,
    });
    return { kind: 'blocks', events$: merge(blocks.events$, lifecycle$, watch$).pipe(share()) };
  }

  const heads =
    rpc && options.reconcile
      ? createCanonicalHeads({
          rpc,
          pollMs: config.canonicalPollMs,
          prefixGraceMs: options.prefixGraceMs ?? 3000,
          executions$: options.executions$,
          stop$,
          logger,
          metrics,
        })
      : undefined;
  const feed = createFlashblocksSource({
    urls: endpoints.feedUrls ?? [],
    frames$: options.frames$,
    canonical$: heads?.steps$.pipe(map((step) => step.blockNumber)),
    maxFrameBytes: config.maxFrameBytes,
    aheadBlocks: config.aheadBlocks,
    ws,
    stop$,
    logger,
    metrics,
    backfill: rpc ? { rpc, maxBlocks: config.maxBackfillBlocks, resumeFrom: options.resume?.[0]?.number ?? null } : undefined,
  });
  // A canonical step's events first, then its number to the sequencer (which may release held
  // flashblocks): `merge` subscribes in this order, and the shared steps reach subscribers in it.
  const reconciled$ = heads ? heads.steps$.pipe(concatMap((step) => from(step.events))) : EMPTY;
  return { kind: 'flashblocks', events$: merge(reconciled$, feed.events$, lifecycle$, watch$).pipe(share()) };
}
