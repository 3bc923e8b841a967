import type { Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { errorMessage, LimitExceededError } from '../../errors.ts';
import { handleText, type RpcCall } from '../../jsonrpc/protocol.ts';
import type { Logger } from '../../obs/logger.ts';
import { counter, gauge, type Registry } from '../../obs/metrics.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { SubscriptionHub } from '../subscriptions/hub.ts';
import type { Dispatch } from './dispatch.ts';

/**
 * The gateway over WebSocket, on the HTTP server's port: the connection limit (503 on upgrade),
 * JSON-RPC messages through the one JSON-RPC edge, the public mode's per-client rate limit (every
 * call over it answers -32005), the heartbeat (every connection is pinged each `heartbeatMs`; one
 * that did not answer the previous ping is closed: peers that are gone, or stopped reading, are
 * found), and a closed connection's subscriptions forgotten.
 */
export function attachWebSocket(
  server: Server,
  options: {
    readonly dispatch: Dispatch;
    readonly hub: SubscriptionHub;
    readonly limiter: RateLimiter;
    readonly public: boolean;
    readonly rateLimit: number;
    readonly maxBodyBytes: number;
    readonly maxBatch: number;
    readonly maxConnections: number;
    readonly heartbeatMs: number;
    readonly logger: Logger;
    readonly metrics: Registry;
  },
): { close(): void } {
  const { logger, limiter, dispatch, hub } = options;
  const protocolLimits = { maxBatch: options.maxBatch };
  const connections = gauge(options.metrics, 'flashlog_ws_connections', 'open WebSocket connections');
  const unanswered = counter(
    options.metrics,
    'flashlog_ws_heartbeat_disconnects_total',
    'WebSocket connections closed for not answering a ping',
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxBodyBytes });
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
  }, options.heartbeatMs);
  heartbeat.unref();

  const serve = (ws: WebSocket, client: string): void => {
    sockets.add(ws);
    answered.add(ws);
    ws.on('pong', () => answered.add(ws));
    connections.set(sockets.size);
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
  };

  server.on('upgrade', (request, socket, head) => {
    if (sockets.size >= options.maxConnections) {
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nconnection limit of ${options.maxConnections} reached\n`,
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, request.socket.remoteAddress ?? 'unknown'));
  });

  return {
    close() {
      clearInterval(heartbeat);
      for (const ws of sockets) ws.terminate();
      wss.close();
    },
  };
}
