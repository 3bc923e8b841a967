import {
  BehaviorSubject,
  EMPTY,
  catchError,
  exhaustMap,
  filter,
  from,
  map,
  merge,
  mergeMap,
  timer,
  type Observable,
  type Subscription,
} from 'rxjs';
import { numberToHex } from 'viem';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, type Registry } from '../obs/metrics.ts';
import { webSocket$, type WebSocketTiming } from '../rx/upstream-socket.ts';

/**
 * The node's head as the gateway knows it, without asking per read: one follower per gateway
 * process. It learns the head from
 * - the node's `eth_subscribe("newHeads")` over its WebSocket JSON-RPC (`--rpc-ws`), with the
 *   reconnect of every upstream socket (src/rx/upstream-socket.ts) and one `eth_blockNumber` on
 *   every (re)connect, so a head notified while the socket was down is not missed;
 * - `eth_blockNumber` every `pollMs` (every `max(10 × pollMs, 2 s)` beside a WebSocket, as a net);
 * - heads seen elsewhere (`saw`): a forwarded answer naming the node's `latest`, the log.
 *
 * It is an invariant that the known head only rises (a node's head going back is a reorg, which
 * the log tells the view; `pending` never needs the lower number).
 *
 * Without a WebSocket and with polling off, nothing is followed: `refresh` asks the node (one call
 * shared by every read waiting on it), which is what a pending read then does.
 */
export interface NodeHead {
  /** The highest head the node is known to have, or undefined before the first. */
  known(): bigint | undefined;
  /** Whether a follower runs (a WebSocket, or polling): without one, `known` is as old as the last `refresh`. */
  readonly following: boolean;
  /** Every rise of the known head. */
  readonly heads$: Observable<bigint>;
  /** A head seen elsewhere (a forwarded `latest` answer): raises the known head if it is higher. */
  saw(number: bigint): void;
  /** Asks the node its head now (concurrent callers share one call) and raises the known head. */
  refresh(): Promise<bigint>;
  /**
   * The node's head read by a call sent after the caller asked: the reads that ask within one turn
   * of the event loop share one `eth_blockNumber`, sent once they are all in (so each answer is at
   * least as new as the node was when its read arrived).
   */
  fresh(): Promise<bigint>;
  /**
   * Whether the known head is the node's own push, fresh: the `newHeads` subscription is
   * confirmed on a live socket, its last notification came within `pushFreshMs`, and nothing else
   * (a poll, a forwarded answer) has learned a higher head than it pushed. Then the node tells its
   * new heads as it makes them, and a pending read at the known head asks nothing (pending.ts).
   */
  pushed(): boolean;
  /**
   * A forwarded read of the node's `latest` (a block number, a block, or state at `latest`) in
   * flight: `settle` waits for it.
   */
  asking(answer: Promise<unknown>): void;
  /**
   * Lets what has already reached the gateway land, asking the node nothing: the reads of one turn
   * of the event loop share one wait for the next turn (so a `newHeads` frame already received is
   * read), then for the forwarded `latest` reads in flight at that moment. Resolves whether there
   * were any, or any within the last minute: clients reading `latest` and `pending` at once through
   * the gateway may see a head the push has not told yet, so the caller then asks the node (after
   * those reads were answered).
   */
  settle(): Promise<boolean>;
  /** The number of transactions of the node's block at `number` (undefined: it has none there yet): asked once per height, not per read. */
  sealedTransactions(number: bigint): Promise<bigint | undefined>;
  close(): void;
}

export interface NodeHeadOptions {
  readonly upstream: Pick<Upstream, 'call'>;
  /** The node's WebSocket JSON-RPC, for `newHeads`; absent: polling only. */
  readonly wsUrl?: string | undefined;
  /** How often `eth_blockNumber` is asked (0: never, unless a WebSocket is given). */
  readonly pollMs: number;
  readonly ws?: WebSocketTiming;
  /**
   * How long after its last `newHeads` notification the push is still taken as the node's head
   * (default 10 s: longer than any OP Stack block time, so a chain that stops making blocks, or a
   * subscription that stops notifying on a socket still answering pings, falls back to asking).
   */
  readonly pushFreshMs?: number;
  readonly logger: Logger;
  readonly metrics: Registry;
}

/**
 * A `latest` read forwarded this recently says clients compare `latest` and `pending` through the
 * gateway (as its checker does, firing both at once): pending at the head is then checked by the
 * node, not taken from the push, whose frame can be a moment behind the node's answers.
 */
const latestReadersMs = 60_000;

/** Heights whose sealed transaction count is remembered (the block being built is at most a few below the head). */
const rememberedCounts = 8;

export function createNodeHead(options: NodeHeadOptions): NodeHead {
  const { upstream, logger } = options;
  const head$ = new BehaviorSubject<bigint | undefined>(undefined);
  const learned = counter(options.metrics, 'flashlog_gateway_node_heads_total', 'node heads the gateway learned, by how', ['by']);
  const headGauge = gauge(options.metrics, 'flashlog_gateway_node_head', 'the node head the gateway knows (pending is held against it)');
  const raise = (number: bigint, by: string) => {
    const current = head$.value;
    if (current !== undefined && number <= current) return;
    learned.inc({ by });
    headGauge.set(Number(number));
    head$.next(number);
  };
  const blockNumber = async () => BigInt((await upstream.call('eth_blockNumber', [])) as string);

  let inFlight: Promise<bigint> | undefined;
  const refresh = () =>
    (inFlight ??= blockNumber()
      .then((number) => {
        raise(number, 'asked');
        return number;
      })
      .finally(() => {
        inFlight = undefined;
      }));

  let batch: Promise<bigint> | undefined;
  const fresh = () =>
    (batch ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => {
        batch = undefined; // reads from now on wait for a call of their own
        return blockNumber();
      })
      .then((number) => {
        raise(number, 'asked');
        return number;
      }));

  const counts = new Map<bigint, Promise<bigint | undefined>>();
  const sealedTransactions = (number: bigint) => {
    let count = counts.get(number);
    if (!count) {
      count = (async () => {
        const answer = await upstream.call('eth_getBlockTransactionCountByNumber', [numberToHex(number)]);
        return typeof answer === 'string' ? BigInt(answer) : undefined;
      })();
      counts.set(number, count);
      // A failed ask, or a block the node does not have yet, is asked again by the next read; only counts are kept.
      count.then(
        (answer) => answer === undefined && counts.delete(number),
        () => counts.delete(number),
      );
      for (const height of counts.keys()) if (counts.size > rememberedCounts && height !== number) counts.delete(height);
    }
    return count;
  };

  const pushFreshMs = options.pushFreshMs ?? 10_000;
  const latestReads = new Set<Promise<unknown>>();
  let latestReadAtMs = Number.NEGATIVE_INFINITY;
  let settling: Promise<boolean> | undefined;
  const settle = () =>
    (settling ??= new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      settling = undefined; // reads from now on wait for a turn of their own
      const readingLatest = performance.now() - latestReadAtMs < latestReadersMs;
      if (latestReads.size === 0) return readingLatest;
      await Promise.allSettled([...latestReads]);
      return true;
    }));
  /** The `newHeads` subscription on the socket now open: confirmed, its newest notification and when it came. */
  let subscribed = false;
  let pushedHead: bigint | undefined;
  let pushedAt = 0;
  const notified$: Observable<bigint> = options.wsUrl
    ? webSocket$(options.wsUrl, {
        pingIntervalMs: options.ws?.pingIntervalMs ?? 10_000,
        reconnectMinMs: options.ws?.reconnectMinMs ?? 250,
        reconnectMaxMs: options.ws?.reconnectMaxMs ?? 10_000,
        maxPayloadBytes: 1024 * 1024,
        greeting: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }),
      }).pipe(
        mergeMap((event): Observable<bigint> => {
          if (event.type === 'connected') {
            subscribed = false; // until the node confirms the subscription on this socket
            return from(refresh()).pipe(catchError(() => EMPTY)); // the head while it was down
          }
          if (event.type === 'disconnected') {
            subscribed = false;
            logger.warn({ upstream: options.wsUrl, reason: event.reason, retryInMs: event.retryInMs }, 'node head: newHeads disconnected');
            return EMPTY;
          }
          const message = notification(event.data);
          if (message?.confirmed) subscribed = true;
          const number = message?.head;
          if (number === undefined) return EMPTY;
          if (pushedHead === undefined || number > pushedHead) pushedHead = number;
          pushedAt = event.receivedAt;
          return from([number]);
        }),
      )
    : EMPTY;
  const pollMs = options.wsUrl ? Math.max(options.pollMs * 10, 2000) : options.pollMs;
  const polled$: Observable<bigint> =
    options.pollMs > 0 || options.wsUrl
      ? timer(0, pollMs).pipe(exhaustMap(() => from(blockNumber()).pipe(catchError(() => EMPTY))))
      : EMPTY;
  const subscription: Subscription = merge(
    notified$.pipe(map((number) => ({ number, by: 'subscription' }))),
    polled$.pipe(map((number) => ({ number, by: 'poll' }))),
  ).subscribe(({ number, by }) => raise(number, by));

  return {
    known: () => head$.value,
    following: options.pollMs > 0 || options.wsUrl !== undefined,
    heads$: head$.pipe(filter((number): number is bigint => number !== undefined)),
    saw: (number) => raise(number, 'answer'),
    asking(answer) {
      latestReadAtMs = performance.now();
      const held = answer.finally(() => latestReads.delete(held));
      held.catch(() => undefined);
      latestReads.add(held);
    },
    settle,
    pushed: () => subscribed && pushedHead !== undefined && head$.value === pushedHead && Date.now() - pushedAt <= pushFreshMs,
    refresh,
    fresh,
    sealedTransactions,
    close() {
      subscription.unsubscribe();
      head$.complete();
    },
  };
}

/**
 * What a frame of the `newHeads` socket says: the subscription confirmed (the answer to the
 * greeting, id 1, a subscription id), or a notified head's block number; undefined for anything else.
 */
function notification(data: Buffer): { readonly confirmed?: true; readonly head?: bigint } | undefined {
  try {
    const message = JSON.parse(data.toString('utf8')) as {
      id?: unknown;
      result?: unknown;
      method?: unknown;
      params?: { result?: { number?: unknown } };
    };
    if (message.id === 1 && typeof message.result === 'string') return { confirmed: true };
    const number = message.params?.result?.number;
    return message.method === 'eth_subscription' && typeof number === 'string' && /^0x[0-9a-f]+$/i.test(number)
      ? { confirmed: true, head: BigInt(number) }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The node's `latest` block number named by a forwarded answer, if the call names it: the gateway
 * learns the head from what clients ask of `latest` through it, so a client that read `latest`
 * through the gateway never reads an older `pending` after it.
 */
export function latestNamedBy(method: string, params: readonly unknown[], result: unknown): bigint | undefined {
  if (method === 'eth_blockNumber') return typeof result === 'string' && /^0x[0-9a-f]+$/i.test(result) ? BigInt(result) : undefined;
  if ((method === 'eth_getBlockByNumber' || method === 'eth_getHeaderByNumber') && params[0] === 'latest') {
    const number = (result as { number?: unknown } | null)?.number;
    return typeof number === 'string' && /^0x[0-9a-f]+$/i.test(number) ? BigInt(number) : undefined;
  }
  return undefined;
}

/**
 * Whether a forwarded call reads the node's `latest`: `eth_blockNumber`, or a call with the tag
 * `latest` among its params (a block, a header, state at `latest`).
 */
export function readsLatest(method: string, params: readonly unknown[]): boolean {
  return method === 'eth_blockNumber' || params.includes('latest');
}
