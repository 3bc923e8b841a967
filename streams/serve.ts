import { join } from 'node:path';
import { warnIfUpstreamBehind } from './node-status.ts';
import { EMPTY } from 'rxjs';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';
import { sourceModeOf, sourceModeSettings, viewBlocksAreCanonical, type SourceKind } from '../src/config/source-mode.ts';
import type { Log } from '../src/log/port.ts';
import { openChainLog } from '../src/log/open-chain-log.ts';
import type { Method } from '../src/rpc/method.ts';
import { createExecutionMethods } from '../src/rpc/execution.ts';
import { createGateway, type Gateway } from '../src/rpc/server.ts';
import { createUpstream, publicUpstreamLabel, type Upstream } from '../src/jsonrpc/upstream.ts';
import { createNodeHead, type NodeHead } from '../src/rpc/node-head.ts';
import { createPendingWatch } from '../src/rpc/pending-watch.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { materialize, type Materialized } from './materialize.ts';

/**
 * log -> view -> JSON-RPC gateway. The view is replayed before the port opens, so the first answer
 * is already as of the log's end.
 */
export interface Serve {
  readonly gateway: Gateway;
  readonly view: Materialized;
  readonly upstream: Upstream;
  /** The node's head as this process follows it (one follower per process). */
  readonly nodeHead: NodeHead;
  close(): Promise<void>;
}

export interface ServeDeps {
  readonly log: Log;
  readonly rpcUrl: string;
  /** Extra or replacing methods (pending execution). */
  readonly methods?: Readonly<Record<string, Method>>;
  /**
   * The source that feeds the log (src/config/source-mode.ts; default flashblocks). On the blocks
   * source every block of the view is canonical: no upstream head poll (it would drop the newest
   * block), and newHeads/logs come from the view.
   */
  readonly source?: SourceKind;
  /** The node's WebSocket JSON-RPC: its `newHeads` tell the gateway the head (else it polls every --head-poll-ms). */
  readonly rpcWsUrl?: string | undefined;
}

export const gatewaySettings = [
  'rpc',
  'rpcTimeoutMs',
  'host',
  'port',
  'public',
  'rateLimit',
  'maxBodyBytes',
  'maxBatch',
  'maxConnections',
  'maxSubscriptions',
  'maxBufferedBytes',
  'maxLogsRange',
  'viewSnapshot',
  'viewSnapshotIntervalMs',
  'headPollMs',
  'callGasCap',
  'callTimeoutMs',
  'simulateGenesis',
  'simulateHardfork',
  'simulateWorkers',
] as const;

export async function createServe(ctx: Context, deps: ServeDeps): Promise<Serve> {
  const { config, logger } = ctx;
  const upstream = createUpstream(deps.rpcUrl, { timeoutMs: config.rpcTimeoutMs, label: publicUpstreamLabel });
  const snapshot =
    config.viewSnapshot === 'off'
      ? undefined
      : {
          path: config.viewSnapshot || join(config.dataDir, deps.log.kind === 'kafka' ? 'view.kafka.snapshot.json' : 'view.snapshot.json'),
          intervalMs: config.viewSnapshotIntervalMs,
        };
  const source = deps.source ?? 'flashblocks';
  // One follower of the node's head per process: pending reads are held against it, and on a
  // flashblocks source the view drops the blocks it reaches. On the blocks source every block of
  // the view is canonical: the view does not take the node's heads (it would drop the newest block).
  const nodeHead = createNodeHead({ upstream, wsUrl: deps.rpcWsUrl, pollMs: config.headPollMs, logger, metrics: ctx.metrics });
  const view = await materialize(ctx, {
    log: deps.log,
    heads$: viewBlocksAreCanonical(source) ? EMPTY : nodeHead.heads$,
    ...(snapshot ? { snapshot } : {}),
  });
  try {
    await view.replayed;
  } catch (error) {
    nodeHead.close();
    await view.close();
    throw error;
  }
  const watch = createPendingWatch({ source, nodeHead, states$: view.states$, logger, metrics: ctx.metrics });
  const execution = createExecutionMethods({
    gasCap: BigInt(config.callGasCap),
    timeoutMs: config.callTimeoutMs,
    simulateGenesis: config.simulateGenesis,
    simulateHardfork: config.simulateHardfork,
    simulateWorkers: config.simulateWorkers,
  });
  let gateway: Gateway;
  try {
    gateway = await createGateway({
      host: config.host,
      port: config.port,
      view: view.current,
      states$: view.states$,
      upstream,
      nodeHead,
      logger,
      metrics: ctx.metrics,
      public: config.public,
      rateLimit: config.rateLimit,
      maxBodyBytes: config.maxBodyBytes,
      maxBatch: config.maxBatch,
      maxConnections: config.maxConnections,
      maxSubscriptions: config.maxSubscriptions,
      maxBufferedBytes: config.maxBufferedBytes,
      maxLogsRange: config.maxLogsRange,
      methods: { ...execution.methods, ...deps.methods },
      exposeMetrics: config.metrics,
      source,
    });
  } catch (error) {
    watch.close();
    nodeHead.close();
    await execution.close();
    await view.close();
    throw error;
  }
  if (config.metrics && config.public && config.metricsPort === undefined) {
    logger.warn('--public: /metrics is not served on the public port; set --metrics-port to serve it on a port of its own');
  }
  logger.info(
    {
      url: gateway.url,
      ws: gateway.wsUrl,
      metrics: config.metrics && !config.public ? `${gateway.url}/metrics` : null,
      upstream: deps.rpcUrl,
      source,
      public: config.public,
    },
    'gateway listening',
  );
  return {
    gateway,
    view,
    upstream,
    nodeHead,
    async close() {
      await gateway.close();
      watch.close();
      nodeHead.close();
      await execution.close();
      await view.close();
    },
  };
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve pending JSON-RPC (HTTP + WebSocket) from the view of the log; everything else goes to --rpc',
  usage:
    'flashlog serve --rpc URL [--source flashblocks|blocks | --ws URL | --network NAME] [--port 8548] [--public] [--kafka-brokers host:port] [options]',
  // The source settings of `ingest`: the same settings give the same source (src/config/source-mode.ts).
  settings: [...serviceSettings, ...logSettings, ...gatewaySettings, ...sourceModeSettings, 'rpcWs'],
  // Not run's 8547: a second gateway beside `run` (over the same embedded log) starts as it is.
  defaults: { port: '8548' },
  longRunning: true,
  async run(ctx) {
    const mode = sourceModeOf({ ...ctx.config, devnet: false, denim: false }); // run's --devnet is not a setting here
    ctx.logger.info({ source: mode.source, decidedBy: mode.decidedBy }, 'source decided');
    if (!mode.rpcUrl)
      throw new ConfigError('--rpc (FLASHLOG_RPC): got nothing, expected the upstream http:// or https:// JSON-RPC URL (or --network)');
    void warnIfUpstreamBehind(mode.rpcUrl, ctx.logger);
    const log = await openChainLog(ctx, { writer: false, rpcUrl: mode.rpcUrl });
    ctx.shutdown.register('log', () => log.close());
    const serve = await createServe(ctx, { log, rpcUrl: mode.rpcUrl, source: mode.source, rpcWsUrl: mode.rpcWsUrl });
    ctx.shutdown.register('gateway', () => serve.close());
    await new Promise<void>((resolve) => {
      if (ctx.shutdown.signal.aborted) resolve();
      ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return 0;
  },
};
