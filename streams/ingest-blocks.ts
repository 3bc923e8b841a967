import { EMPTY, fromEvent, type Observable } from 'rxjs';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';
import type { SourceMode } from '../src/config/source-mode.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import type { Log } from '../src/log/port.ts';
import { createBlocksSource } from '../src/source/blocks.ts';
import { safeHeads$ } from '../src/source/safe-heads.ts';
import type { SourceEvent } from '../src/source/port.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { openChainLog } from './log-chain.ts';
import { createSourceIngest, type Ingest } from './source-ingest.ts';

/**
 * The blocks-source ingest (Base after Denim): the blocks source (src/source/blocks.ts) into the
 * ingest topology (source-ingest.ts), as the flashblocks feed is wired in ingest.ts:
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

export type BlocksIngest = Ingest;

export function createBlocksIngest(ctx: Context, deps: BlocksIngestDeps): BlocksIngest {
  const { config, logger, metrics } = ctx;
  const rpc = createUpstream(deps.rpcUrl, { timeoutMs: config.rpcTimeoutMs });
  const source = createBlocksSource({
    rpc,
    wsUrl: deps.rpcWsUrl,
    pollMs: config.blocksPollMs,
    maxHeld: config.maxReorgBlocks,
    maxWalkBlocks: config.maxBackfillBlocks,
    ws: { pingIntervalMs: config.pingIntervalMs, reconnectMinMs: config.reconnectMinMs, reconnectMaxMs: config.reconnectMaxMs },
    stop$: fromEvent(ctx.shutdown.signal, 'abort'),
    logger,
    metrics,
  });
  return createSourceIngest(ctx, { log: deps.log, source, lifecycle$: safeHeadsOf(ctx, deps.rpcUrl, deps.consensusRpcUrl) });
}

/** Safe / finalized heads from the node's tags (or op-node's optimism_syncStatus); none without an RPC. */
export function safeHeadsOf(ctx: Context, rpcUrl: string | undefined, consensusRpcUrl = ctx.config.consensusRpc): Observable<SourceEvent> {
  if (!rpcUrl) return EMPTY;
  const { config, logger, metrics } = ctx;
  return safeHeads$({
    rpc: createUpstream(rpcUrl, { timeoutMs: config.rpcTimeoutMs }),
    consensus: consensusRpcUrl ? createUpstream(consensusRpcUrl, { timeoutMs: config.rpcTimeoutMs }) : undefined,
    pollMs: config.lifecyclePollMs,
    stop$: fromEvent(ctx.shutdown.signal, 'abort'),
    logger,
    metrics,
  });
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
export async function runBlocksIngest(ctx: Context, mode: SourceMode): Promise<number> {
  const rpcUrl = mode.rpcUrl;
  if (!rpcUrl)
    throw new ConfigError(
      "--rpc (FLASHLOG_RPC): got nothing, expected the node's http:// or https:// JSON-RPC URL (--source blocks reads blocks and receipts from it)",
    );
  const log = await openChainLog(ctx, { writer: true, rpcUrl: ctx.config.rpc });
  ctx.shutdown.register('log', () => log.close());
  const ingest = createBlocksIngest(ctx, { log, rpcUrl, rpcWsUrl: mode.rpcWsUrl, consensusRpcUrl: ctx.config.consensusRpc });
  const done = ingest.run();
  ctx.shutdown.register('ingest', () => done.catch(() => {})); // a failure is the command's own error
  ctx.logger.info({ rpc: rpcUrl, rpcWs: mode.rpcWsUrl ?? null, log: log.kind }, 'ingest started (blocks source)');
  await done;
  return 0;
}

export const blocksIngestSettings: Command['settings'] = [
  ...serviceSettings,
  ...logSettings,
  'produceBufferRecords',
  'drainTimeoutMs',
  'pingIntervalMs',
  'reconnectMinMs',
  'reconnectMaxMs',
  ...blocksSettings,
];
