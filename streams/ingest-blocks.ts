import { fromEvent, lastValueFrom, merge, share, tap, type Observable } from 'rxjs';
import { sourceEventRecords } from '../src/source/event-records.ts';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';
import { openLog } from '../src/log/open.ts';
import type { Log } from '../src/log/port.ts';
import { createPublisher, type Publisher } from '../src/log/publisher.ts';
import { histogram } from '../src/obs/metrics.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import { createBlocksSource } from '../src/source/blocks.ts';
import { lifecycle$ } from '../src/source/lifecycle.ts';
import type { SourceEvent } from '../src/source/port.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';

/**
 * The blocks-source topology (Base after Denim):
 *
 *   node newHeads (ws) / poll latest -> link by parent hash -> grew | replaced -> publish
 *   node safe/finalized tags (or optimism_syncStatus) ------> lifecycle ------> publish
 *
 * The records are those of an assembled flashblocks block (flashlog.blocks at index 0,
 * flashlog.logs), plus flashlog.chain reorg / safe / finalized; no flashlog.flashblocks.
 */
export interface BlocksIngestDeps {
  readonly log: Log;
  readonly rpcUrl: string;
  readonly rpcWsUrl?: string | undefined;
  readonly consensusRpcUrl?: string | undefined;
}

export interface BlocksIngest {
  readonly events$: Observable<SourceEvent>;
  readonly publisher: Publisher;
  run(): Promise<void>;
}

export function createBlocksIngest(ctx: Context, deps: BlocksIngestDeps): BlocksIngest {
  const { config, logger, metrics } = ctx;
  const latency = histogram(
    metrics,
    'flashlog_blocks_latency_seconds',
    'blocks source: head notification (or poll) to block record appended',
    [],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const publisher = createPublisher(deps.log, { logger, metrics, maxQueued: config.produceBufferRecords });
  const stop$ = fromEvent(ctx.shutdown.signal, 'abort');
  const rpc = createUpstream(deps.rpcUrl, { timeoutMs: config.rpcTimeoutMs });
  const source = createBlocksSource({
    rpc,
    wsUrl: deps.rpcWsUrl,
    pollMs: config.blocksPollMs,
    maxHeld: config.maxReorgBlocks,
    maxWalkBlocks: config.maxBackfillBlocks,
    ws: { pingIntervalMs: config.pingIntervalMs, reconnectMinMs: config.reconnectMinMs, reconnectMaxMs: config.reconnectMaxMs },
    stop$,
    logger,
    metrics,
  });
  const consensus = deps.consensusRpcUrl ? createUpstream(deps.consensusRpcUrl, { timeoutMs: config.rpcTimeoutMs }) : undefined;
  const events$ = merge(source.events$, lifecycle$({ rpc, consensus, pollMs: config.lifecyclePollMs, stop$, logger, metrics })).pipe(
    tap((event) => {
      publisher.push(sourceEventRecords(event));
      if (event.type === 'grew') latency.observe(Math.max(0, Date.now() - event.receivedAt) / 1000);
    }),
    share(),
  );
  return {
    events$,
    publisher,
    async run() {
      await lastValueFrom(events$, { defaultValue: undefined });
      await publisher.flush();
    },
  };
}

/** Safe / finalized records for the flashblocks source (the blocks source has them built in). */
export function startLifecycle(ctx: Context, publisher: Publisher, rpcUrl: string | undefined): void {
  if (!rpcUrl) return;
  const { config, logger, metrics } = ctx;
  const subscription = lifecycle$({
    rpc: createUpstream(rpcUrl, { timeoutMs: config.rpcTimeoutMs }),
    consensus: config.consensusRpc ? createUpstream(config.consensusRpc, { timeoutMs: config.rpcTimeoutMs }) : undefined,
    pollMs: config.lifecyclePollMs,
    stop$: fromEvent(ctx.shutdown.signal, 'abort'),
    logger,
    metrics,
  }).subscribe((event) => publisher.push(sourceEventRecords(event)));
  ctx.shutdown.register('lifecycle', () => subscription.unsubscribe());
}

export const blocksSettings = [
  'rpc',
  'rpcTimeoutMs',
  'rpcWs',
  'blocksPollMs',
  'maxReorgBlocks',
  'maxBackfillBlocks',
  'lifecyclePollMs',
  'consensusRpc',
] as const;

/** `flashlog ingest --source blocks`: the blocks source into the log. */
export async function runBlocksIngest(ctx: Context): Promise<number> {
  if (!ctx.config.rpc)
    throw new ConfigError(
      "--rpc (FLASHLOG_RPC): got nothing, expected the node's http:// or https:// JSON-RPC URL (--source blocks reads blocks and receipts from it)",
    );
  const log = await openLog(ctx.config, ctx.logger);
  ctx.shutdown.register('log', () => log.close());
  const ingest = createBlocksIngest(ctx, {
    log,
    rpcUrl: ctx.config.rpc,
    rpcWsUrl: ctx.config.rpcWs,
    consensusRpcUrl: ctx.config.consensusRpc,
  });
  ctx.shutdown.register('publisher', () => ingest.publisher.flush());
  ctx.logger.info({ rpc: ctx.config.rpc, rpcWs: ctx.config.rpcWs ?? null, log: log.kind }, 'ingest started (blocks source)');
  await ingest.run();
  return 0;
}

export const blocksIngestSettings: Command['settings'] = [
  ...serviceSettings,
  ...logSettings,
  'produceBufferRecords',
  'pingIntervalMs',
  'reconnectMinMs',
  'reconnectMaxMs',
  ...blocksSettings,
];
