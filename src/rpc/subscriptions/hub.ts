import { randomBytes } from 'node:crypto';
import type { Observable } from 'rxjs';
import type { WebSocket } from 'ws';
import type { SourceKind } from '../../config/source-mode.ts';
import { InvalidParamsError, LimitExceededError } from '../../errors.ts';
import type { Logger } from '../../obs/logger.ts';
import { gauge, type Registry } from '../../obs/metrics.ts';
import { parseParam } from '../../schemas/issue.ts';
import type { Upstream } from '../../jsonrpc/upstream.ts';
import type { ViewState } from '../../view/state.ts';
import type { TransactionFormatter } from '../format.ts';
import type { Feed, KindSource, Subscriber, SubscriptionKind } from './kind.ts';
import { createLogFanout, type LogSubscriber } from './log-fanout.ts';
import { notifyFromStreams } from './notify.ts';
import { subscriptionKinds } from './registry.ts';
import { createSocketWriter, notificationPrefix } from './socket-writer.ts';

/**
 * eth_subscribe / eth_unsubscribe over WebSocket, for the kinds of `registry.ts` (each described in
 * its file under `kinds/`). The hub keeps the subscriptions (by id, by connection, by kind), hands
 * each kind the stream it reads (notify.ts) and writes through one socket writer: each notification
 * covers only what the latest view change added, every payload is serialized once and shared by
 * all subscribers, and a connection whose unsent bytes exceed `maxBufferedBytes` is closed (1008,
 * with the reason) and never slows the others.
 */
export interface SubscriptionLimits {
  readonly maxSubscriptions: number;
  readonly maxBufferedBytes: number;
}

export interface SubscriptionHub {
  /** eth_subscribe `[kind, ...options]` on one connection: the subscription id. */
  subscribe(socket: WebSocket, params: readonly unknown[]): string;
  /** eth_unsubscribe: whether the connection had that subscription. */
  unsubscribe(socket: WebSocket, id: string): boolean;
  /** Forgets a closed connection. */
  detach(socket: WebSocket): void;
  readonly subscriberCount: () => number;
  close(): void;
}

/** One subscription: its kind, options and connection (a log kind's also goes to the log fan-out). */
export interface Subscription extends Subscriber<unknown>, LogSubscriber {
  readonly spec: SubscriptionKind;
  readonly source: KindSource;
}

export function createSubscriptionHub(options: {
  states$: Observable<ViewState>;
  formatter: TransactionFormatter;
  limits: SubscriptionLimits;
  logger: Logger;
  metrics: Registry;
  /** Where canonical blocks are read for `newHeads` and `logs` on a flashblocks chain. */
  upstream?: Upstream;
  /**
   * The source mode, which says where `newHeads` and `logs` come from: the view on the blocks
   * source (each block of the view is canonical), the upstream on a flashblocks chain (the default),
   * whose view holds pre-confirmed blocks; there, without an upstream, those two kinds are refused.
   */
  source?: SourceKind;
}): SubscriptionHub {
  const { limits, logger } = options;
  const feed: Feed = { source: options.source ?? 'flashblocks', upstream: options.upstream !== undefined };
  const offered = new Map<string, { spec: SubscriptionKind; source: KindSource }>();
  for (const spec of subscriptionKinds) {
    const source = spec.reads(feed);
    if (source) offered.set(spec.name, { spec, source });
  }
  const byId = new Map<string, Subscription>();
  const bySocket = new Map<WebSocket, Map<string, Subscription>>();
  const byKind = new Map<string, Set<Subscription>>([...offered.keys()].map((name) => [name, new Set()]));
  const subscribers = gauge(options.metrics, 'flashlog_ws_subscriptions', 'active subscriptions', ['kind']);
  const writer = createSocketWriter({ maxBufferedBytes: limits.maxBufferedBytes, logger, metrics: options.metrics });
  const fanout = createLogFanout(writer, logger, options.metrics);

  const out = {
    formatter: options.formatter,
    send(sub: Subscriber<unknown>, result: string): void {
      const { socket, spec } = sub as Subscription;
      if (!writer.writable(socket)) return;
      fanout.flush(socket);
      writer.cork(socket);
      socket.send(`${notificationPrefix(sub.id)}${result}}}`);
      writer.sent(spec.name);
    },
  };
  const streams = notifyFromStreams({
    states$: options.states$,
    ...(options.upstream ? { upstream: options.upstream } : {}),
    logger,
    kinds: [...offered.values()],
    subscribersOf: (name) => byKind.get(name)!,
    active: () => byId.size > 0,
    fanout,
    out,
  });

  const remove = (sub: Subscription): void => {
    byId.delete(sub.id);
    bySocket.get(sub.socket)?.delete(sub.id);
    byKind.get(sub.spec.name)!.delete(sub);
    fanout.remove(sub);
    subscribers.set({ kind: sub.spec.name }, byKind.get(sub.spec.name)!.size);
  };

  const subscribe = (socket: WebSocket, params: readonly unknown[]): string => {
    const name = params[0];
    const kind = typeof name === 'string' ? offered.get(name) : undefined;
    if (!kind) {
      throw new InvalidParamsError(
        `params[0]: expected one of ${[...offered.keys()].join(', ')}, got ${JSON.stringify(name) ?? 'nothing'}`,
      );
    }
    const mine = bySocket.get(socket) ?? new Map<string, Subscription>();
    if (mine.size >= limits.maxSubscriptions) {
      throw new LimitExceededError(`subscription limit reached: at most ${limits.maxSubscriptions} per connection`);
    }
    const parsed = parseParam(kind.spec.params, params, 'params');
    const sub: Subscription = {
      id: `0x${randomBytes(16).toString('hex')}`,
      kind: kind.spec.name,
      spec: kind.spec,
      source: kind.source,
      options: parsed,
      filter: kind.spec.logFilter?.(parsed) ?? null,
      socket,
    };
    byId.set(sub.id, sub);
    mine.set(sub.id, sub);
    bySocket.set(socket, mine);
    byKind.get(sub.kind)!.add(sub);
    if (sub.source === 'logs') fanout.add(sub);
    subscribers.set({ kind: sub.kind }, byKind.get(sub.kind)!.size);
    return sub.id;
  };

  return {
    subscribe,
    unsubscribe(socket, id) {
      const sub = byId.get(id);
      if (!sub || sub.socket !== socket) return false;
      // what the gateway had for it before the unsubscribe still goes out
      fanout.catchUp(sub);
      remove(sub);
      return true;
    },
    detach(socket) {
      for (const sub of bySocket.get(socket)?.values() ?? []) remove(sub);
      bySocket.delete(socket);
    },
    subscriberCount: () => byId.size,
    close: () => streams.close(),
  };
}
