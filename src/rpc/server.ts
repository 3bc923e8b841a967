import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SourceKind } from '../config/source-mode.ts';
import { createTransactionFormatter } from './format.ts';
import { createIsthmusRule } from './fork-rule.ts';
import { createDispatch, type DispatchSettings } from './gateway/dispatch.ts';
import { createHttpHandler } from './gateway/http.ts';
import { attachWebSocket } from './gateway/websocket.ts';
import { createRateLimiter, type RateLimiter } from './rate-limit.ts';
import { createSubscriptionHub } from './subscriptions/hub.ts';

/**
 * The gateway: JSON-RPC 2.0 over HTTP POST and WebSocket on one port. Methods in the table are
 * answered from the view; all others are forwarded to the upstream unchanged. Its pieces:
 * `gateway/http.ts` (POST, health, metrics), `gateway/websocket.ts` (connections, heartbeat),
 * `gateway/dispatch.ts` (public mode's policy for every transport, the method table, its metrics) and the subscription hub
 * (`subscriptions/hub.ts`).
 */
export interface GatewayOptions extends DispatchSettings {
  readonly host: string;
  readonly port: number;
  /** The per-client budget, when not a token bucket of `rateLimit` (tests count what it is charged). */
  readonly limiter?: RateLimiter;
  readonly maxBodyBytes: number;
  readonly maxConnections: number;
  readonly maxSubscriptions: number;
  readonly maxBufferedBytes: number;
  /**
   * WebSocket heartbeat: every connection is pinged this often, and one that has not answered the
   * previous ping is closed (default 60 s): peers that are gone, or stopped reading, are found.
   */
  readonly heartbeatMs?: number;
  /** Serve `GET /metrics` from `metrics` on this port (never in public mode). */
  readonly exposeMetrics?: boolean;
  /** The source mode (default flashblocks): where `newHeads` and `logs` come from (see createSubscriptionHub). */
  readonly source?: SourceKind;
}

export interface Gateway {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { logger, upstream } = options;
  const formatter = createTransactionFormatter(undefined, undefined, { isthmusAt: createIsthmusRule(upstream) });
  const limiter = options.limiter ?? createRateLimiter(options.rateLimit);
  const hub = createSubscriptionHub({
    states$: options.states$,
    formatter,
    limits: { maxSubscriptions: options.maxSubscriptions, maxBufferedBytes: options.maxBufferedBytes },
    logger,
    metrics: options.metrics,
    upstream,
    ...(options.source ? { source: options.source } : {}),
  });
  const dispatch = createDispatch({ ...options, formatter, hub, limiter });
  const server: Server = createServer(createHttpHandler({ ...options, dispatch }));
  server.keepAliveTimeout = 30_000;
  server.on('clientError', (_error, socket) => socket.destroy());
  const websocket = attachWebSocket(server, { ...options, dispatch, hub, heartbeatMs: options.heartbeatMs ?? 60_000 });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    port,
    async close() {
      hub.close();
      websocket.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
