import { fromEvent, type Observable } from 'rxjs';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';
import { sourceModeOf } from '../src/config/source-mode.ts';
import type { Executor } from '../src/execute/port.ts';
import type { Log } from '../src/log/port.ts';
import type { WebSocketEvent } from '../src/rx/upstream-socket.ts';
import { createFlashblocksSource } from '../src/source/flashblocks.ts';
import type { SourceEvent } from '../src/source/port.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { blocksSettings, safeHeadsOf, runBlocksIngest } from './ingest-blocks.ts';
import { createExecution } from './ingest-execution.ts';
import { warnIfUpstreamBehind } from './node-status.ts';
import { openChainLog } from './log-chain.ts';
import { createSourceIngest, type Ingest } from './source-ingest.ts';

export type { Ingest };

/**
 * The flashblocks ingest: the flashblocks source (src/source/flashblocks.ts) into the ingest
 * topology (source-ingest.ts), executing each flashblock for its receipts:
 *
 *   ws (1..n) -> flashblocks source -> grew -> publish flashblock -> execute -> publish block, logs
 *   canonical heads --^ (optional, from ingest-execution.ts)
 */
export interface IngestDeps {
  readonly log: Log;
  readonly urls: readonly string[];
  readonly executor?: Executor;
  /** Canonical head numbers from the upstream, when known (releases held flashblocks). */
  readonly canonical$?: Observable<bigint>;
  /** Frames from elsewhere (tests, replays) in addition to the URLs. */
  readonly frames$?: Observable<WebSocketEvent>;
  /** Safe / finalized heads to publish alongside. */
  readonly lifecycle$?: Observable<SourceEvent> | undefined;
}

export function createIngest(ctx: Context, deps: IngestDeps): Ingest {
  const { config, logger, metrics } = ctx;
  const source = createFlashblocksSource({
    urls: deps.urls,
    frames$: deps.frames$,
    canonical$: deps.canonical$,
    maxFrameBytes: config.maxFrameBytes,
    aheadBlocks: config.aheadBlocks,
    ws: { pingIntervalMs: config.pingIntervalMs, reconnectMinMs: config.reconnectMinMs, reconnectMaxMs: config.reconnectMaxMs },
    stop$: fromEvent(ctx.shutdown.signal, 'abort'),
    logger,
    metrics,
  });
  return createSourceIngest(ctx, { log: deps.log, source, executor: deps.executor, lifecycle$: deps.lifecycle$ });
}

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
    'rpc',
    'rpcTimeoutMs',
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
    if (mode.source === 'blocks') return runBlocksIngest(ctx, mode);
    const urls = mode.feedUrls;
    if (urls.length === 0)
      throw new ConfigError(
        "--ws (FLASHLOG_WS): got nothing, expected at least one ws:// or wss:// URL (or --source blocks --rpc URL for a node's 200 ms blocks)",
      );
    const rpcUrl = mode.rpcUrl;
    void warnIfUpstreamBehind(rpcUrl, ctx.logger);
    const log = await openChainLog(ctx, { writer: true, rpcUrl });
    ctx.shutdown.register('log', () => log.close());
    // Receipts (--executor) and reconciliation with canonical heads from --rpc (ingest-execution.ts).
    const execution = await createExecution(ctx, { rpcUrl });
    ctx.shutdown.register('execution', () => execution.close(), { timeoutMs: ctx.config.drainTimeoutMs });
    const ingest = createIngest(ctx, {
      log,
      urls,
      executor: execution.executor,
      canonical$: execution.canonical$,
      lifecycle$: safeHeadsOf(ctx, rpcUrl),
    });
    execution.start(ingest.publisher);
    const done = ingest.run();
    // Closed first (registered last): the executor and the log stay open until the work in flight
    // is done or abandoned (--drain-timeout-ms).
    ctx.shutdown.register('ingest', () => done.catch(() => {})); // a failure is the command's own error
    ctx.logger.info({ upstreams: urls, log: log.kind }, 'ingest started');
    await done;
    return 0;
  },
};
