import type { WebSocket } from 'ws';
import { errorMessage } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import { histogram, type Registry } from '../../obs/metrics.ts';
import type { RpcLog } from '../../records/logs.ts';
import type { LogFilter } from '../params.ts';
import { writeLogFrames, type LogBatch } from './frames.ts';
import { notificationPrefix, type SocketWriter } from './socket-writer.ts';

/** Subscribers written per turn of the event loop. */
const FAN_OUT_SLICE = 100;
/** Times in a row a pass goes back to its first subscribers for newer logs. */
const MAX_RESTARTS = 3;

export interface LogSubscriber {
  readonly id: string;
  readonly kind: string;
  readonly socket: WebSocket;
  readonly filter: LogFilter | null;
}

/**
 * The log kinds' fan-out (`pendingLogs`, and `logs` on a view-fed chain), the hot path: every log
 * to every subscriber. Each batch of logs is serialized once, and a subscriber gets all its
 * notifications in one write of ready-made WebSocket text frames. Frames go straight to the
 * connection's socket: without permessage-deflate (the server never enables it) `ws` writes its
 * own frames synchronously too, so the order on the wire is kept.
 *
 * One writer (`pump`) serves the subscribers in the order they came, a slice per turn of the event
 * loop. It starts after the turn that queued a batch (setImmediate, no timer), so every batch the
 * log delivered in that turn (a burst, a replay) reaches a subscriber in one write, one syscall. The
 * slices mean a fan-out to thousands never holds back the pipeline behind it. When newer logs arrive
 * during a pass, the writer goes back to the first subscribers (those up to date get the new
 * batch; the rest get every batch they lack in one write), so the earliest subscribers wait for
 * one slice, not for the whole previous fan-out; a later one waits for the slices before it. Each
 * subscriber gets the batches in order.
 */
export interface LogFanout {
  /** A new subscriber: it gets the logs queued from now on. */
  add(sub: LogSubscriber): void;
  remove(sub: LogSubscriber): void;
  /** Writes `sub` every batch it still lacks, now (before an unsubscribe). */
  catchUp(sub: LogSubscriber): void;
  /** A connection's logs go out before its other notifications. */
  flush(socket: WebSocket): void;
  /** One flashblock's new logs, or a reorg's withdrawn ones. */
  queue(logs: readonly RpcLog[]): void;
}

interface Cursor {
  /** The newest batch this subscriber has been written. */
  sent: number;
  readonly prefix: Buffer;
}

export function createLogFanout(writer: SocketWriter, logger: Logger, metrics: Registry): LogFanout {
  const fanoutSeconds = histogram(
    metrics,
    'flashlog_ws_log_fanout_seconds',
    'log fan-out: from a batch of logs queued to its last log subscriber written',
    [],
    [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  /** Every log subscriber, in arrival order, with its cursor. */
  const subs = new Map<LogSubscriber, Cursor>();
  const bySocket = new Map<WebSocket, Set<LogSubscriber>>();
  const batches: LogBatch[] = [];
  let seq = 0;
  /** A pass is under way or queued for the end of this turn. */
  let pumping = false;

  /** Writes `sub` every batch after its cursor up to `target`, in one write. */
  const write = (sub: LogSubscriber, cursor: Cursor, target: number): void => {
    const from = cursor.sent;
    cursor.sent = target;
    if (!writer.writable(sub.socket)) return;
    const pending = batches.filter((batch) => batch.seq > from && batch.seq <= target);
    const count = writeLogFrames(sub.socket, writer.raw(sub.socket), pending, sub.filter, cursor.prefix);
    if (count > 0) writer.sent(sub.kind, count);
  };

  const catchUp = (sub: LogSubscriber): void => {
    const cursor = subs.get(sub);
    if (cursor && cursor.sent < seq) write(sub, cursor, seq);
  };

  async function pump(): Promise<void> {
    try {
      let restarts = 0;
      for (;;) {
        const target = seq;
        let written = 0;
        let complete = true;
        for (const [sub, cursor] of [...subs]) {
          if (cursor.sent >= target || !subs.has(sub)) continue;
          try {
            write(sub, cursor, target);
          } catch (error) {
            // one subscriber's failure (a socket error) skips it, never the others
            cursor.sent = target;
            logger.warn({ err: errorMessage(error), subscription: sub.id }, 'pendingLogs notification failed');
          }
          if (++written % FAN_OUT_SLICE !== 0) continue;
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (seq !== target && restarts < MAX_RESTARTS) {
            restarts++;
            complete = false;
            break;
          }
        }
        if (!complete) continue;
        restarts = 0;
        // every subscriber has every batch up to target
        const now = performance.now();
        while (batches.length > 0 && batches[0]!.seq <= target) fanoutSeconds.observe((now - batches.shift()!.queuedAt) / 1000);
        if (seq === target) return;
      }
    } catch (error) {
      logger.warn({ err: errorMessage(error) }, 'pendingLogs notification failed');
    } finally {
      pumping = false;
    }
  }

  return {
    add(sub) {
      subs.set(sub, { sent: seq, prefix: Buffer.from(notificationPrefix(sub.id)) });
      const mine = bySocket.get(sub.socket) ?? new Set();
      mine.add(sub);
      bySocket.set(sub.socket, mine);
    },
    remove(sub) {
      subs.delete(sub);
      const mine = bySocket.get(sub.socket);
      mine?.delete(sub);
      if (mine?.size === 0) bySocket.delete(sub.socket);
    },
    catchUp,
    flush(socket) {
      if (seq === 0) return;
      for (const sub of bySocket.get(socket) ?? []) catchUp(sub);
    },
    queue(logs) {
      if (subs.size === 0 || logs.length === 0) return;
      batches.push({ seq: ++seq, logs, queuedAt: performance.now(), bodies: new Array(logs.length) });
      if (pumping) return;
      pumping = true;
      setImmediate(() => void pump());
    },
  };
}
