import { Observable } from 'rxjs';
import WebSocket from 'ws';

/**
 * One upstream WebSocket as an Observable that never completes on its own: it connects, pings
 * every `pingIntervalMs`, and reconnects when no pong came back before the next ping or when the
 * socket closes. Reconnects back off from `reconnectMinMs`, doubling to `reconnectMaxMs`; a
 * connection that delivered a message resets the backoff (Base's node subscriber does the same).
 */
export type WebSocketEvent =
  | { readonly type: 'frame'; readonly url: string; readonly data: Buffer; readonly binary: boolean; readonly receivedAt: number }
  | { readonly type: 'connected'; readonly url: string }
  | { readonly type: 'disconnected'; readonly url: string; readonly reason: string; readonly retryInMs: number };

/** How a source keeps its upstream WebSocket alive: the part of the options its caller chooses per command. */
export type WebSocketTiming = Pick<WebSocketSourceOptions, 'pingIntervalMs' | 'reconnectMinMs' | 'reconnectMaxMs'>;

export interface WebSocketSourceOptions {
  readonly pingIntervalMs: number;
  readonly reconnectMinMs: number;
  readonly reconnectMaxMs: number;
  /** Frames above this close the connection (ws's own limit); keep it above the decode cap. */
  readonly maxPayloadBytes: number;
  readonly handshakeTimeoutMs?: number;
  /** A text message sent on every (re)connect, e.g. a node's `eth_subscribe` call. */
  readonly greeting?: string;
}

export function webSocket$(url: string, options: WebSocketSourceOptions): Observable<WebSocketEvent> {
  return new Observable<WebSocketEvent>((subscriber) => {
    let socket: WebSocket | undefined;
    let pingTimer: NodeJS.Timeout | undefined;
    let retryTimer: NodeJS.Timeout | undefined;
    let delayMs = options.reconnectMinMs;
    let stopped = false;

    const scheduleReconnect = (reason: string) => {
      if (stopped || retryTimer) return;
      if (pingTimer) clearInterval(pingTimer);
      pingTimer = undefined;
      const retryInMs = delayMs;
      delayMs = Math.min(delayMs * 2, options.reconnectMaxMs);
      subscriber.next({ type: 'disconnected', url, reason, retryInMs });
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        connect();
      }, retryInMs);
    };

    const connect = () => {
      if (stopped) return;
      const current = new WebSocket(url, {
        maxPayload: options.maxPayloadBytes,
        handshakeTimeout: options.handshakeTimeoutMs ?? 5000,
        perMessageDeflate: false,
      });
      socket = current;
      let alive = true;
      let delivered = false;
      current.on('open', () => {
        if (options.greeting !== undefined) current.send(options.greeting);
        subscriber.next({ type: 'connected', url });
        pingTimer = setInterval(() => {
          if (!alive) {
            current.terminate();
            scheduleReconnect(`no pong within ${options.pingIntervalMs} ms`);
            return;
          }
          alive = false;
          current.ping();
        }, options.pingIntervalMs);
      });
      current.on('pong', () => {
        alive = true;
      });
      current.on('message', (data: WebSocket.RawData, binary: boolean) => {
        alive = true;
        if (!delivered) {
          delivered = true;
          delayMs = options.reconnectMinMs;
        }
        const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
        subscriber.next({ type: 'frame', url, data: buffer, binary, receivedAt: Date.now() });
      });
      current.on('error', (error: Error) => {
        current.terminate();
        scheduleReconnect(error.message);
      });
      current.on('close', (code: number, reason: Buffer) => {
        if (socket === current) scheduleReconnect(`closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`);
      });
    };

    connect();
    return () => {
      stopped = true;
      if (pingTimer) clearInterval(pingTimer);
      if (retryTimer) clearTimeout(retryTimer);
      socket?.removeAllListeners();
      socket?.on('error', () => undefined);
      socket?.terminate();
    };
  });
}
