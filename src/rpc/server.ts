import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Observable } from 'rxjs';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  errorMessage,
  InvalidRequestError,
  JsonRpcError,
  LimitExceededError,
  MethodNotFoundError,
  ResourceUnavailableError,
} from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { answerMetrics, counter, gauge, histogram, type Registry } from '../obs/metrics.ts';
import type { ViewState } from '../view/state.ts';
import { readBody, replyJson } from '../jsonrpc/edge.ts';
import { createTransactionFormatter } from './format.ts';
import { callable, type Method, type MethodContext } from './method.ts';
import { methodSpecs, registry } from './registry.ts';
import { paramsArray } from './params.ts';
import { errorResponse, handleText, parseMessage, type RpcCall } from '../jsonrpc/protocol.ts';
import { createRateLimiter } from './rate-limit.ts';
import { createSubscriptionHub } from './subscriptions.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';

/**
 * The gateway: JSON-RPC 2.0 over HTTP POST and WebSocket on one port. Methods in the table are
 * answered from the view; all others are forwarded to the upstream unchanged.
 */
export interface GatewayOptions {
  readonly host: string;
  readonly port: number;
  /** The current view (read per call). */
  readonly view: () => ViewState;
  /** Every new view state, for subscriptions (the first one seen is not notified). */
  readonly states$: Observable<ViewState>;
  readonly upstream: Upstream;
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly public: boolean;
  readonly rateLimit: number;
  readonly maxBodyBytes: number;
  readonly maxBatch: number;
  readonly maxConnections: number;
  readonly maxSubscriptions: number;
  readonly maxBufferedBytes: number;
  readonly maxLogsRange: number;
  /** Extra or replacing methods (e.g. eth_call on pending state). */
  readonly methods?: Readonly<Record<string, Method>>;
  /**
   * WebSocket heartbeat: every connection is pinged this often, and one that has not answered the
   * previous ping is closed (default 60 s): peers that are gone, or stopped reading, are found.
   */
  readonly heartbeatMs?: number;
  /** Serve `GET /metrics` from `metrics` on this port (never in public mode). */
  readonly exposeMetrics?: boolean;
  /** Where `newHeads` and `logs` come from (see createSubscriptionHub): `view` for the blocks source. */
  readonly standardKinds?: 'view' | 'upstream';
}

export interface Gateway {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The registry's methods that need nothing beyond the view (the executing ones come in `options.methods`). */
const builtin: Readonly<Record<string, Method>> = Object.fromEntries(
  registry.filter((spec) => !spec.executes).map((spec) => [spec.name, callable(spec)]),
);
const websocketOnly = (method: string): boolean => methodSpecs.get(method)?.transports.includes('http') === false;
const publicForbidden = (method: string): boolean => methodSpecs.get(method)?.public === 'forbidden';

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { logger, upstream } = options;
  const table: Record<string, Method> = { ...builtin, ...options.methods };
  const formatter = createTransactionFormatter();
  const requests = counter(
    options.metrics,
    'flashlog_rpc_requests_total',
    'JSON-RPC calls, by method and whether the view or the upstream answered',
    ['method', 'source', 'outcome'],
  );
  const duration = histogram(
    options.metrics,
    'flashlog_rpc_request_duration_seconds',
    'JSON-RPC call duration, by method and whether the view or the upstream answered',
    ['method', 'source'],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const connections = gauge(options.metrics, 'flashlog_ws_connections', 'open WebSocket connections');
  const unanswered = counter(
    options.metrics,
    'flashlog_ws_heartbeat_disconnects_total',
    'WebSocket connections closed for not answering a ping',
  );
  const limiter = createRateLimiter(options.rateLimit);
  const limits = { maxLogsRange: options.maxLogsRange };
  const protocolLimits = { maxBatch: options.maxBatch };

  const dispatch = async (call: RpcCall, socket?: WebSocket): Promise<unknown> => {
    const method = call.method;
    const wsOnly = websocketOnly(method);
    const handler = table[method];
    const label = handler ? method : 'other';
    const source = handler && !wsOnly ? 'view' : 'upstream';
    const stopTimer = duration.startTimer({ method: label, source });
    try {
      let result: unknown;
      if (wsOnly && !socket) throw new MethodNotFoundError(`${method} (only over WebSocket)`);
      const forward = (params?: readonly unknown[]) => upstream.call(method, (params ?? call.params ?? []) as unknown[]);
      if (handler) {
        const subscriptions = socket ? (params: readonly unknown[]) => hub.call(socket, method, params) : undefined;
        const context: MethodContext = {
          view: options.view,
          states$: options.states$,
          upstream,
          formatter,
          limits,
          forward,
          subscriptions,
        };
        result = await handler(paramsArray(call.params, method), context);
      } else {
        result = await forward();
      }
      requests.inc({ method: label, source, outcome: 'ok' });
      stopTimer();
      return result;
    } catch (error) {
      requests.inc({ method: label, source, outcome: error instanceof JsonRpcError ? String(error.rpcCode) : 'internal' });
      stopTimer();
      if (!(error instanceof JsonRpcError)) logger.warn({ method, err: errorMessage(error) }, 'call failed');
      throw error;
    }
  };

  const reply = (response: ServerResponse, status: number, body: string | null): void =>
    replyJson(response, body === null ? 204 : status, body);

  const onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    // Browser dapps call the RPC directly: allow any origin, as public Ethereum endpoints do.
    response.setHeader('access-control-allow-origin', '*');
    if (request.method === 'OPTIONS') {
      response
        .writeHead(204, {
          'access-control-allow-methods': 'POST, GET, OPTIONS',
          'access-control-allow-headers': 'content-type',
          'access-control-max-age': '86400',
        })
        .end();
      return;
    }
    if (options.exposeMetrics && !options.public && answerMetrics(options.metrics, request, response)) return;
    if (request.method === 'GET' && (request.url === '/healthz' || request.url === '/health')) {
      reply(response, 200, JSON.stringify({ ok: true, blocks: options.view().blocks.length }));
      return;
    }
    if (request.method !== 'POST') {
      response
        .writeHead(405, { allow: 'POST', 'content-type': 'application/json' })
        .end(JSON.stringify(errorResponse(null, new InvalidRequestError('invalid request: JSON-RPC calls are HTTP POST'))));
      return;
    }
    const tooLarge = () =>
      JSON.stringify(
        errorResponse(null, new InvalidRequestError(`invalid request: body exceeds the limit of ${options.maxBodyBytes} bytes`)),
      );
    void readBody(request, response, options.maxBodyBytes, tooLarge)
      .then((text) => {
        if (text === undefined) return;
        return serveHttp(request, response, text);
      })
      .catch((error: unknown) => {
        logger.error({ err: errorMessage(error) }, 'request failed');
        if (!response.headersSent) reply(response, 500, JSON.stringify(errorResponse(null, error)));
      });
  };

  const serveHttp = async (request: IncomingMessage, response: ServerResponse, text: string): Promise<void> => {
    if (options.public) {
      let calls: ReturnType<typeof parseMessage> | undefined;
      try {
        calls = parseMessage(JSON.parse(text), protocolLimits);
      } catch {
        calls = undefined; // handleText answers the parse error
      }
      const list = Array.isArray(calls) ? calls : [];
      const client = request.socket.remoteAddress ?? 'unknown';
      if (!limiter.take(client, Math.max(1, list.length))) {
        reply(
          response,
          429,
          JSON.stringify(
            errorResponse(null, new LimitExceededError(`rate limit exceeded: at most ${options.rateLimit} calls per second per client`)),
          ),
        );
        return;
      }
      const forbidden = list.find((call) => !(call instanceof JsonRpcError) && publicForbidden(call.method));
      if (forbidden && !(forbidden instanceof JsonRpcError)) {
        reply(
          response,
          403,
          JSON.stringify(
            errorResponse(
              forbidden.id ?? null,
              new ResourceUnavailableError(`${forbidden.method} is not available on this public endpoint`),
            ),
          ),
        );
        return;
      }
    }
    reply(response, 200, await handleText(text, (call) => dispatch(call), protocolLimits));
  };

  const server: Server = createServer(onRequest);
  server.keepAliveTimeout = 30_000;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxBodyBytes });
  const hub = createSubscriptionHub({
    states$: options.states$,
    formatter,
    limits: { maxSubscriptions: options.maxSubscriptions, maxBufferedBytes: options.maxBufferedBytes },
    logger,
    metrics: options.metrics,
    upstream,
    ...(options.standardKinds ? { standardKinds: options.standardKinds } : {}),
  });
  const sockets = new Set<WebSocket>();
  /** Connections that have answered the last ping (or connected since). */
  const answered = new WeakSet<WebSocket>();
  const heartbeat = setInterval(() => {
    for (const ws of sockets) {
      if (!answered.has(ws)) {
        unanswered.inc();
        logger.info('websocket peer did not answer a ping; closing');
        ws.terminate();
        continue;
      }
      answered.delete(ws);
      ws.ping();
    }
  }, options.heartbeatMs ?? 60_000);
  heartbeat.unref();
  server.on('upgrade', (request, socket, head) => {
    if (sockets.size >= options.maxConnections) {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nconnection limit of ${options.maxConnections} reached\n`,
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.add(ws);
      answered.add(ws);
      ws.on('pong', () => answered.add(ws));
      connections.set(sockets.size);
      const client = request.socket.remoteAddress ?? 'unknown';
      ws.on('message', (data, isBinary) => {
        const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
        // Public mode: the same per-client budget as HTTP; over it, every call answers -32005.
        const limited = options.public && !limiter.take(client, 1);
        const run = limited
          ? () => Promise.reject(new LimitExceededError(`rate limit exceeded: at most ${options.rateLimit} calls per second per client`))
          : (call: RpcCall) => dispatch(call, ws);
        void handleText(text, run, protocolLimits).then((body) => {
          if (body !== null && ws.readyState === ws.OPEN) ws.send(body);
        });
      });
      ws.on('close', () => {
        sockets.delete(ws);
        connections.set(sockets.size);
        hub.detach(ws);
      });
      ws.on('error', (error) => logger.debug({ err: errorMessage(error) }, 'websocket error'));
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());

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
      clearInterval(heartbeat);
      hub.close();
      for (const ws of sockets) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
