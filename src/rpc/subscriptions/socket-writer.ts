import type { WebSocket } from 'ws';
import type { Logger } from '../../obs/logger.ts';
import { counter, type Registry } from '../../obs/metrics.ts';

/**
 * What every notification goes through on its way to a connection: the slow-subscriber drop (a
 * connection whose unsent bytes exceed `maxBufferedBytes` is closed, 1008 with the reason, and
 * never slows the others), corking (every notification a connection gets in one turn of the event
 * loop, from every view change the log delivered in that turn, goes out in one write, one syscall:
 * the writer uncorks once per turn, on setImmediate, not per view change and never on a timer), and
 * the JSON-RPC notification envelope.
 */
export interface SocketWriter {
  /** False when the connection is gone or was just dropped as too slow (then nothing is written). */
  writable(socket: WebSocket): boolean;
  /** Corks the connection's socket until the end of this turn of the event loop. */
  cork(socket: WebSocket): void;
  /** The raw TCP socket under a `ws` connection, for frames written ready-made. */
  raw(socket: WebSocket): RawSocket | undefined;
  /** Counts notifications sent, by kind. */
  sent(kind: string, count?: number): void;
}

export interface RawSocket {
  write(data: Buffer): boolean;
  cork(): void;
  uncork(): void;
}

/** `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"<id>","result":` + result + `}}`. */
export const notificationPrefix = (id: string): string =>
  `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${id}","result":`;

export function createSocketWriter(options: { maxBufferedBytes: number; logger: Logger; metrics: Registry }): SocketWriter {
  const { maxBufferedBytes, logger } = options;
  const notifications = counter(options.metrics, 'flashlog_ws_notifications_total', 'subscription notifications sent', ['kind']);
  const slowDrops = counter(options.metrics, 'flashlog_ws_slow_disconnects_total', 'subscribers disconnected for falling behind');
  const slow = new WeakSet<WebSocket>();
  const corked = new Set<RawSocket>();
  let uncorkQueued = false;
  const raw = (socket: WebSocket) => (socket as unknown as { _socket?: RawSocket })._socket;
  const uncorkAll = (): void => {
    uncorkQueued = false;
    for (const under of corked) under.uncork();
    corked.clear();
  };

  /** Closes a connection whose unsent data passed the limit (1008, with the reason); true if it did. */
  const dropIfSlow = (socket: WebSocket): boolean => {
    if (socket.bufferedAmount <= maxBufferedBytes) return false;
    // bytes held back by this turn's cork are not the subscriber's fault: hand them to the kernel
    // first, so the drop judges what the connection really left unsent, as it did uncorked
    const under = raw(socket);
    if (under && corked.delete(under)) {
      under.uncork();
      if (socket.bufferedAmount <= maxBufferedBytes) return false;
    }
    slow.add(socket);
    slowDrops.inc();
    logger.warn({ buffered: socket.bufferedAmount, limit: maxBufferedBytes }, 'subscriber too slow; disconnecting');
    socket.close(1008, `subscriber too slow: ${socket.bufferedAmount} bytes unsent exceeds ${maxBufferedBytes}`);
    setTimeout(() => socket.terminate(), 2000).unref();
    return true;
  };

  return {
    writable: (socket) => !slow.has(socket) && socket.readyState === socket.OPEN && !dropIfSlow(socket),
    cork(socket) {
      const under = raw(socket);
      if (!under || corked.has(under)) return;
      under.cork();
      corked.add(under);
      if (uncorkQueued) return;
      uncorkQueued = true;
      setImmediate(uncorkAll);
    },
    raw,
    sent: (kind, count = 1) => notifications.inc({ kind }, count),
  };
}
