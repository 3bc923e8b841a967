import type { Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import { counter, gauge, type Registry } from '../../obs/metrics.ts';
import type { SubscriptionHub } from '../subscriptions/hub.ts';
import type { MessageDispatch } from './dispatch.ts';

/**
 * The gateway over WebSocket, on the HTTP server's port: the connection limit (503 on upgrade),
 * each message answered by the one dispatch (dispatch.ts: public mode's rate limit and refused
 * methods, call by call, as over HTTP; the connection stays open), the heartbeat (every
 * connection is pinged each `heartbeatMs`; one that did not answer the previous ping is closed:
 * peers that are gone, or stopped reading, are found), and a closed connection's subscriptions
 * forgotten.
 */
export function attachWebSocket(
  server: Server,
  options: {
    readonly dispatch: MessageDispatch;
    readonly hub: SubscriptionHub;
    readonly maxBodyBytes: number;
    readonly maxConnections: number;
    readonly heartbeatMs: number;
    readonly logger: Logger;
    readonly metrics: Registry;
  },
): { close(): void } {
  const { logger, dispatch, hub } = options;
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
      void dispatch.answer(text, { transport: 'ws', client, socket: ws }).then(({ body }) => {
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
