import { join } from 'node:path';
import { warnIfUpstreamBehind } from './node-status.ts';
import { EMPTY, catchError, distinctUntilChanged, exhaustMap, from, map, timer, type Observable } from 'rxjs';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';
import type { Log } from '../src/log/port.ts';
import { openChainLog } from './log-chain.ts';
import type { Method } from '../src/rpc/method.ts';
import { createExecutionMethods } from '../src/rpc/execution.ts';
import { createGateway, type Gateway } from '../src/rpc/server.ts';
import { createUpstream, type Upstream } from '../src/jsonrpc/upstream.ts';
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
  close(): Promise<void>;
}

export interface ServeDeps {
  readonly log: Log;
  readonly rpcUrl: string;
  /** Extra or replacing methods (pending execution). */
  readonly methods?: Readonly<Record<string, Method>>;
  /**
   * Whether the upstream's head (polled every --head-poll-ms) drops pending blocks at or below it
   * (default true). Not on a Denim chain (blocks source): there the upstream's head is the newest
   * unsafe block itself, which is what `pending` serves.
   */
  readonly followUpstreamHead?: boolean;
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

/** Canonical head numbers, polled from the upstream (errors skip a tick). */
export function upstreamHeads$(upstream: Upstream, intervalMs: number): Observable<bigint> {
  if (intervalMs <= 0) return EMPTY;
  return timer(0, intervalMs).pipe(
    exhaustMap(() => from(upstream.call('eth_blockNumber', [])).pipe(catchError(() => EMPTY))),
    map((value) => BigInt(value as string)),
    distinctUntilChanged(),
  );
}

export async function createServe(ctx: Context, deps: ServeDeps): Promise<Serve> {
  const { config, logger } = ctx;
  const upstream = createUpstream(deps.rpcUrl, { timeoutMs: config.rpcTimeoutMs });
  const snapshot =
    config.viewSnapshot === 'off'
      ? undefined
      : {
          path: config.viewSnapshot || join(config.dataDir, deps.log.kind === 'kafka' ? 'view.kafka.snapshot.json' : 'view.snapshot.json'),
          intervalMs: config.viewSnapshotIntervalMs,
        };
  // On the blocks source every block of the view is canonical: no upstream head poll (it would
  // drop the newest block), and newHeads/logs come from the view.
  const follow = deps.followUpstreamHead ?? config.source !== 'blocks';
  const view = await materialize(ctx, {
    log: deps.log,
    heads$: upstreamHeads$(upstream, follow ? config.headPollMs : 0),
    ...(snapshot ? { snapshot } : {}),
  });
  try {
    await view.replayed;
  } catch (error) {
    await view.close();
    throw error;
  }
  const execution = createExecutionMethods({
    upstream,
    logger,
    metrics: ctx.metrics,
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
      standardKinds: follow ? 'upstream' : 'view',
    });
  } catch (error) {
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
      public: config.public,
    },
    'gateway listening',
  );
  return {
    gateway,
    view,
    upstream,
    async close() {
      await gateway.close();
      await execution.close();
      await view.close();
    },
  };
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve pending JSON-RPC (HTTP + WebSocket) from the view of the log; everything else goes to --rpc',
  usage: 'flashlog serve --rpc URL [--port 8548] [--public] [--source blocks] [--kafka-brokers host:port] [options]',
  settings: [...serviceSettings, ...logSettings, ...gatewaySettings, 'source'],
  // Not run's 8547: a second gateway beside `run` (over the same embedded log) starts as it is.
  defaults: { port: '8548' },
  longRunning: true,
  async run(ctx) {
    if (!ctx.config.rpc) throw new ConfigError('--rpc (FLASHLOG_RPC): got nothing, expected the upstream http:// or https:// JSON-RPC URL');
    void warnIfUpstreamBehind(ctx.config.rpc, ctx.logger);
    const log = await openChainLog(ctx, { writer: false, rpcUrl: ctx.config.rpc });
    ctx.shutdown.register('log', () => log.close());
    const serve = await createServe(ctx, { log, rpcUrl: ctx.config.rpc });
    ctx.shutdown.register('gateway', () => serve.close());
    await new Promise<void>((resolve) => {
      if (ctx.shutdown.signal.aborted) resolve();
      ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    return 0;
  },
};
