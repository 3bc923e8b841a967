import { Subject, type Observable } from 'rxjs';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';
import { sourceModeOf } from '../src/config/source-mode.ts';
import { createExecutor } from '../src/execute/create.ts';
import type { Executor } from '../src/execute/port.ts';
import type { Log } from '../src/log/port.ts';
import type { WebSocketEvent } from '../src/rx/upstream-socket.ts';
import { createSource, type SourceEndpoints } from '../src/source/create.ts';
import type { SourceExecution } from '../src/source/port.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { warnIfUpstreamBehind } from './node-status.ts';
import { openChainLog } from '../src/log/open-chain-log.ts';
import { writerGuards, type WriterGuards } from './log-chain.ts';
import { createSourceIngest, type Ingest } from './source-ingest.ts';

export type { Ingest };

/**
 * The ingest: the source of the source mode (src/source/create.ts) into the ingest topology
 * (source-ingest.ts), the one road from either source to the log. `run` composes the same.
 *
 *   flashblocks: ws (1..n) + canonical heads (--rpc) -> source -> grew | lifecycle | replaced -> execute (grew) -> publish
 *                                                       ^---------------- executions$ ----------------'
 *   blocks:      node newHeads / poll (--rpc, --rpc-ws)  -> source -> grew | lifecycle | replaced --------------> publish
 *
 * A flashblocks chain is reconciled with its canonical heads (sealed / reorg records) when its
 * blocks are executed: the executor's logs are what a reorg withdraws. Either source starts where
 * the log ends and stops once the node is another chain than the log's (`guards`).
 */
export interface IngestDeps {
  readonly log: Log;
  /** Where the source reads (a SourceMode from sourceModeOf, or the endpoints of a test). */
  readonly endpoints: SourceEndpoints;
  /** Finds the receipts of flashblocks (none on the blocks source, whose node gives them). */
  readonly executor?: Executor | undefined;
  /** Frames from elsewhere (tests, replays) in addition to the feeds. */
  readonly frames$?: Observable<WebSocketEvent>;
  /** Where the log ends and how its chain is held against the node's (log-chain.ts, writerGuards); a test may leave them out. */
  readonly guards?: WriterGuards;
}

export function createIngest(ctx: Context, deps: IngestDeps): Ingest {
  const executor = deps.endpoints.source === 'flashblocks' ? deps.executor : undefined;
  // The ingest's executions, as they start, back into the source (its canonical heads wait for them).
  const executions$ = new Subject<SourceExecution>();
  const source = createSource(ctx, deps.endpoints, {
    reconcile: executor !== undefined,
    frames$: deps.frames$,
    resume: deps.guards?.resume,
    verifyChain: deps.guards?.verifyChain,
    executions$,
  });
  return createSourceIngest(ctx, { log: deps.log, source, executor, executions: executions$ });
}

/** The executor of the settings (--executor, --state-diff), closed at shutdown after the ingest. */
export async function createIngestExecutor(ctx: Context, rpcUrl: string | undefined): Promise<Executor> {
  const { config, logger, metrics } = ctx;
  const executor = await createExecutor(config.executor, {
    rpcUrl,
    timeoutMs: config.rpcTimeoutMs,
    logger,
    metrics,
    stateDiff: config.stateDiff,
  });
  ctx.shutdown.register('execution', () => executor.close(), { timeoutMs: config.drainTimeoutMs });
  return executor;
}

/** The settings of the blocks source and of the safe/finalized heads (both sources). */
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

export const ingestCommand: Command = {
  name: 'ingest',
  summary:
    "read flashblocks feeds, or a node's 200 ms blocks (--source blocks), into the log (flashlog.blocks, flashlog.logs, flashlog.chain)",
  usage:
    'flashlog ingest --ws URL [--ws URL ...] [--kafka-brokers host:port] [options]\n       flashlog ingest --source blocks --rpc URL [--rpc-ws URL] [--consensus-rpc URL] [options]\n       flashlog ingest --network NAME [options]',
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
    'drainTimeoutMs',
    'executor',
    'stateDiff',
    'canonicalPollMs',
    'source',
    'network',
    ...blocksSettings,
  ],
  defaults: { metricsPort: '9464' },
  longRunning: true,
  async run(ctx) {
    const mode = sourceModeOf({ ...ctx.config, devnet: false, denim: false }); // run's --devnet is not a setting here
    ctx.logger.info({ source: mode.source, decidedBy: mode.decidedBy }, 'source decided');
    if (!mode.rpcUrl && mode.feedUrls.length === 0)
      throw new ConfigError(
        "--ws (FLASHLOG_WS) or --rpc (FLASHLOG_RPC): got neither, expected a flashblocks feed's ws:// URL, or a node's http(s):// JSON-RPC URL for its 200 ms blocks (or --network)",
      );
    if (mode.source === 'blocks' && !mode.rpcUrl)
      throw new ConfigError(
        "--rpc (FLASHLOG_RPC): got nothing, expected the node's http:// or https:// JSON-RPC URL (--source blocks reads blocks and receipts from it)",
      );
    if (mode.source === 'flashblocks' && mode.feedUrls.length === 0)
      throw new ConfigError(
        mode.missingFeed ??
          "--ws (FLASHLOG_WS): got nothing, expected at least one ws:// or wss:// URL (or --source blocks --rpc URL for a node's 200 ms blocks)",
      );
    if (mode.source === 'flashblocks') void warnIfUpstreamBehind(mode.rpcUrl, ctx.logger);
    const log = await openChainLog(ctx, { writer: true, rpcUrl: mode.rpcUrl });
    ctx.shutdown.register('log', () => log.close());
    // Receipts of flashblocks (--executor); the blocks source's come from the node.
    const executor = mode.source === 'flashblocks' ? await createIngestExecutor(ctx, mode.rpcUrl) : undefined;
    const guards = await writerGuards(ctx, log, mode.rpcUrl);
    const ingest = createIngest(ctx, { log, endpoints: mode, executor, guards });
    const done = ingest.run();
    // Closed first (registered last): the executor and the log stay open until the work in flight
    // is done or abandoned (--drain-timeout-ms).
    ctx.shutdown.register('ingest', () => done.catch(() => {})); // a failure is the command's own error
    if (mode.source === 'blocks')
      ctx.logger.info({ rpc: mode.rpcUrl, rpcWs: mode.rpcWsUrl ?? null, log: log.kind }, 'ingest started (blocks source)');
    else ctx.logger.info({ upstreams: mode.feedUrls, log: log.kind }, 'ingest started');
    await done;
    return 0;
  },
};
