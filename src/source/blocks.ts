import { EMPTY, concatMap, from, map, merge, mergeMap, share, takeUntil, timer, type Observable } from 'rxjs';
import type { Hex } from 'viem';
import { commit, initialLinkState, reset, tip, type LinkState } from '../chain/link.ts';
import { walkGap, type LoggedBlock } from '../chain/resume.ts';
import { findResumePoint } from './blocks-resume.ts';
import { walkBack } from './blocks-walk.ts';
import { ConfigError, errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, type Registry } from '../obs/metrics.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { webSocket$, type WebSocketTiming } from '../rx/upstream-socket.ts';
import { BadBlockError, createNodeReader, type ReadBlock } from './node-reader.ts';
import type { Source, SourceEvent } from './port.ts';

/**
 * The blocks source: Base's 200 ms blocks after Denim, read from a node. Heads come from the
 * node's `eth_subscribe("newHeads")` over `wsUrl`, each read by hash (every reconnect reads `latest`, which
 * backfills what the dropped connection missed), or from polling `latest` every `pollMs`; with a
 * WebSocket a slow poll still runs, so a socket that stays open but goes quiet loses nothing.
 *
 * Each head is linked to the blocks held by parent hash (src/chain/link.ts): a gap or a reorg is
 * walked back by parent hash, at most `maxWalkBlocks`, to a block held; every held block above the
 * common ancestor is `replaced` (its logs withdrawn), then the new blocks `grew`, oldest first.
 * A walk below the window withdraws every block held (a reorg deeper than the window); a walk
 * past --max-backfill-blocks keeps the blocks walked and writes the rest as a `gap`: a metric, one
 * log line each. Before either, and when the head goes backwards, the node's chain is checked
 * (`verifyChain`): a node that became another chain stops the source, never mixing two in one log.
 *
 * A restarted source resumes from the newest block the log holds (`resume`), so the first head
 * backfills what the process missed while it was down, as after a WebSocket cut.
 *
 * Nothing is held until its block and receipts are read and linked, so a failed read (the node
 * not answering, a bad block) loses nothing: the next head walks back over it again.
 */
export interface BlocksSourceOptions {
  readonly rpc: Upstream;
  readonly wsUrl?: string | undefined;
  readonly pollMs: number;
  readonly maxHeld: number;
  readonly maxWalkBlocks: number;
  readonly ws: WebSocketTiming;
  readonly stop$: Observable<unknown>;
  readonly logger: Logger;
  readonly metrics: Registry;
  /** The newest blocks the log holds, newest first (src/chain/resume.ts): where a restarted ingest resumes. */
  readonly resume?: readonly LoggedBlock[] | undefined;
  /**
   * Throws (a ConfigError naming both chains) when the node is no longer the log's chain; called
   * before the source acts on a head that went backwards, a reorg below the window or a long gap.
   */
  readonly verifyChain?: (() => Promise<void>) | undefined;
}

type Trigger = { readonly id: Hex | 'latest'; readonly at: number };

export function createBlocksSource(options: BlocksSourceOptions): Source {
  const { logger, metrics } = options;
  const problems = counter(metrics, 'flashlog_blocks_source_problems_total', 'blocks source: bad input or outages, by reason', ['reason']);
  const reorgs = counter(metrics, 'flashlog_blocks_source_reorgs_total', 'blocks source: blocks replaced at a height already held');
  const backfilled = counter(
    metrics,
    'flashlog_blocks_source_backfilled_total',
    'blocks source: blocks read by walking back from a head (gaps and reorgs)',
  );
  const headGauge = gauge(metrics, 'flashlog_blocks_source_head', 'blocks source: number of the newest block held');
  const reader = createNodeReader(options.rpc);
  let state: LinkState<ReadBlock> = initialLinkState(options.maxHeld);
  let outage: { since: number; reason: string } | null = null;
  let resumed = false;
  /** After a resume that found none of the log's blocks on the node: the oldest of them, where a gap starts. */
  let resumeGapFrom: bigint | null = null;

  const problem = (reason: string, detail: Record<string, unknown>, message: string) => {
    problems.inc({ reason });
    logger.warn({ reason, ...detail }, message);
  };

  /** Resuming after a restart (blocks-resume.ts): the events of the log's blocks the node no longer has. */
  async function resume(): Promise<SourceEvent[]> {
    const point = await findResumePoint(options.rpc, reader, options.resume ?? [], options.verifyChain);
    if (point.held) {
      state = commit(state, [point.held]);
      logger.info(
        { block: Number(point.held.number), withdrawn: point.withdrawn.length },
        "blocks source: resuming from the last block the log holds; backfilling to the node's head",
      );
    } else if (point.gapFrom !== null) {
      problem(
        'reorg_too_deep',
        { oldest: Number(point.gapFrom), withdrawn: point.withdrawn.length },
        "blocks source: the node has none of the newest blocks the log holds; they are withdrawn and the source starts at the node's head",
      );
      resumeGapFrom = point.gapFrom;
    }
    return [...point.withdrawn];
  }

  async function handle(trigger: Trigger): Promise<SourceEvent[]> {
    if (trigger.id !== 'latest' && state.held.some((held) => held.hash === trigger.id.toLowerCase())) return [];
    let head: ReadBlock | null;
    let segment: readonly ReadBlock[] = [];
    let withdrawn: readonly ReadBlock[] = [];
    const events: SourceEvent[] = [];
    try {
      if (!resumed) {
        events.push(...(await resume()));
        resumed = true;
      }
      // A notification names its block: read by hash, block and receipts at once. A head replaced
      // meanwhile is withdrawn again when its replacement's notification (or the poll) comes.
      head = await reader.read(trigger.id);
      if (!head) return events;
      const newest = tip(state);
      if (newest && head.number < newest.number && !state.held.some((held) => held.hash === head!.hash)) {
        // A node restarted as another chain goes backwards first: it stops the source before anything of it is held.
        await options.verifyChain?.();
        problem(
          'head_backwards',
          { head: Number(head.number), held: Number(newest.number) },
          "blocks source: the node's head went backwards; treating it as a reorg",
        );
      }
      const walk = await walkBack(state, head, reader, options.maxWalkBlocks, options.verifyChain);
      if (walk.type === 'duplicate') return events;
      if (walk.type === 'unknown-parent') {
        problem(
          'unknown_parent',
          { block: Number(walk.block.number), parentHash: walk.block.parentHash },
          "blocks source: the node does not know a block's parent; retrying at the next head",
        );
        return events;
      }
      segment = walk.segment;
      withdrawn = walk.withdrawn;
      const where = { head: Number(head.number), walked: segment.length, held: Number(tip(state)?.number ?? -1n) };
      if (walk.resync?.type === 'below-window')
        problem('reorg_too_deep', where, 'blocks source: no common ancestor among the blocks held; every block held is withdrawn');
      else if (walk.resync?.type === 'too-long') {
        problem('gap_too_long', where, 'blocks source: more blocks missing than --max-backfill-blocks; the oldest are a gap in the log');
        if (walk.resync.gap) events.push({ type: 'gap', ...walk.resync.gap, reason: 'beyond_max_backfill' });
      }
      if (walk.resync) state = reset(state);
    } catch (error) {
      // Another chain (the node's genesis changed): the source stops, the writer with it.
      if (error instanceof ConfigError) throw error;
      const reason = error instanceof BadBlockError ? error.reason : 'node_unavailable';
      problems.inc({ reason });
      if (!outage || outage.reason !== reason) {
        outage = { since: Date.now(), reason };
        logger.warn(
          { reason, err: errorMessage(error) },
          'blocks source: could not read from the node; nothing is lost, retrying at the next head',
        );
      }
      return events;
    }
    if (outage) {
      logger.info({ reason: outage.reason, downMs: Date.now() - outage.since }, 'blocks source: reading from the node again');
      outage = null;
    }
    if (resumeGapFrom !== null) {
      // The log's newest blocks were all gone from the node: the numbers below the first block now held are a gap.
      const gap = walkGap(resumeGapFrom - 1n, segment[0]!.number);
      if (gap) events.push({ type: 'gap', from: gap.from, to: gap.to, reason: 'not_on_node' });
      resumeGapFrom = null;
    }
    if (segment.length > 1) backfilled.inc(segment.length - 1);
    events.push(...replacedEvents(withdrawn, segment));
    reorgs.inc(withdrawn.length);
    if (withdrawn.length > 0)
      logger.warn(
        {
          from: Number(withdrawn[0]!.number),
          blocks: withdrawn.length,
          removedLogs: events.reduce((n, event) => n + (event.type === 'replaced' ? event.removedLogs.length : 0), 0),
        },
        'blocks source: reorg, held blocks replaced',
      );
    for (const block of segment) events.push({ type: 'grew', block: block.block, receipts: block.receipts, receivedAt: trigger.at });
    state = commit(state, segment);
    headGauge.set(Number(tip(state)?.number ?? 0n));
    return events;
  }

  const heads$ = newHeads$(options, problem);
  const pollMs = options.wsUrl ? Math.max(options.pollMs * 10, 2000) : options.pollMs;
  const polls$ = timer(0, pollMs).pipe(map((): Trigger => ({ id: 'latest', at: Date.now() })));

  return {
    kind: 'blocks',
    events$: merge(heads$, polls$).pipe(
      takeUntil(options.stop$),
      concatMap((trigger) => from(handle(trigger)).pipe(mergeMap((events) => from(events)))),
      share(),
    ),
  };
}

/** The `replaced` events of held blocks withdrawn by a reorg, each naming the block of the new segment at its height. */
function replacedEvents(withdrawn: readonly ReadBlock[], segment: readonly ReadBlock[]): SourceEvent[] {
  return withdrawn.map((old): SourceEvent => {
    const by = segment.find((block) => block.number === old.number) ?? null;
    const kept = new Set(by?.block.transactions.map((tx) => tx.hash) ?? []);
    return {
      type: 'replaced',
      blockNumber: old.number,
      replacedHash: old.hash,
      byHash: by?.hash ?? null,
      transactions: by?.block.transactions.map((tx) => tx.hash) ?? [],
      removedTransactions: old.block.transactions.map((tx) => tx.hash).filter((hash) => !kept.has(hash)),
      index: 0,
      removedLogs: old.receipts.flatMap((receipt) => receipt.logs).map((log) => ({ ...log, removed: true })),
    };
  });
}

/** The heads of the node's `newHeads` subscription (each connect reads `latest`: a backfill of what a cut missed); none without a WebSocket. */
function newHeads$(
  options: BlocksSourceOptions,
  problem: (reason: string, detail: Record<string, unknown>, message: string) => void,
): Observable<Trigger> {
  const { logger } = options;
  return options.wsUrl
    ? webSocket$(options.wsUrl, {
        ...options.ws,
        maxPayloadBytes: 16 * 1024 * 1024,
        greeting: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
      }).pipe(
        mergeMap((event): Observable<Trigger> => {
          if (event.type === 'connected') {
            logger.info({ upstream: options.wsUrl }, 'blocks source: newHeads connected');
            return from([{ id: 'latest' as const, at: Date.now() }]);
          }
          if (event.type === 'disconnected') {
            problem(
              'ws_disconnected',
              { upstream: options.wsUrl, reason: event.reason, retryInMs: event.retryInMs },
              'blocks source: newHeads disconnected; reconnecting, then backfilling',
            );
            return EMPTY;
          }
          const hash = headHash(event.data);
          return hash ? from([{ id: hash, at: event.receivedAt }]) : EMPTY;
        }),
      )
    : EMPTY;
}

/** The block hash of a `newHeads` notification, or null for anything else. */
function headHash(data: Buffer): Hex | null {
  try {
    const message = JSON.parse(data.toString('utf8')) as { method?: string; params?: { result?: { hash?: unknown } } };
    const hash = message.method === 'eth_subscription' ? message.params?.result?.hash : undefined;
    return typeof hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(hash) ? (hash.toLowerCase() as Hex) : null;
  } catch {
    return null;
  }
}
