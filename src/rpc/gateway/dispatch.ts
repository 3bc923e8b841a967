import type { WebSocket } from 'ws';
import { errorMessage, JsonRpcError, LimitExceededError, MethodNotFoundError, ResourceUnavailableError } from '../../errors.ts';
import { errorResponse, handleText, type RpcCall } from '../../jsonrpc/protocol.ts';
import type { Logger } from '../../obs/logger.ts';
import type { Counter, Histogram } from 'prom-client';
import { counter, histogram, type Registry } from '../../obs/metrics.ts';
import type { TransactionFormatter } from '../format.ts';
import type { Method, MethodContext, Transport } from '../method.ts';
import { paramsArray } from '../params.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { methodSpecs, registry } from '../registry.ts';
import type { SubscriptionHub } from '../subscriptions/hub.ts';
import { latestNamedBy, readsLatest } from '../node-head.ts';

/** The registry's methods that need nothing beyond the view (the executing ones come in `methods`). */
const builtin: Readonly<Record<string, Method>> = Object.fromEntries(
  registry.filter((spec) => !spec.executes).map((spec) => [spec.name, spec.call]),
);

/** Who sent a message, and over what. */
export interface Caller {
  readonly transport: Transport;
  /** The client's address: the key of its rate-limit budget. */
  readonly client: string;
  /** The connection (WebSocket calls only): its subscriptions. */
  readonly socket?: WebSocket;
}

/** A message's answer: the body (null when every call was a notification) and, when no call was served, the policy that refused them. */
export interface MessageAnswer {
  readonly body: string | null;
  /** Every call refused by the rate limit (`rate-limit`) or the public policy (`public`): HTTP's 429 and 403. */
  readonly refused?: 'rate-limit' | 'public';
}

/** Answers whole messages (one call or a batch) for every transport. */
export interface MessageDispatch {
  answer(text: string, caller: Caller): Promise<MessageAnswer>;
}

/**
 * What the gateway's own options (GatewayOptions in ../server.ts) give the dispatch: the view, its
 * states, the upstream and the followed node head pass on to every method as they are.
 */
export interface DispatchSettings extends Pick<MethodContext, 'view' | 'states$' | 'upstream' | 'nodeHead'> {
  readonly logger: Logger;
  readonly metrics: Registry;
  readonly public: boolean;
  /** Calls per second per client in public mode (a token bucket, one token per call on every transport). */
  readonly rateLimit: number;
  readonly maxBatch: number;
  readonly maxLogsRange: number;
  /** Extra or replacing methods (e.g. eth_call on pending state). */
  readonly methods?: Readonly<Record<string, Method>>;
}

/**
 * The gateway's one dispatch: HTTP and WebSocket hand it each message as received, so its policy
 * holds on every transport alike, call by call (inside batches too):
 * - public mode: every call takes one token of its client's budget (a message with no valid call
 *   takes one); a call over the budget is answered -32005 and the others in its batch are served;
 * - a method is served only over the transports its registry entry names (else -32601);
 * - public mode: a method declared `public: 'forbidden'` is refused with -32001;
 * then the method table (the registry, `methods` over it) or the upstream answers, with
 * per-method metrics (calls by outcome, duration) labelled by whether the view or the upstream did.
 */
export function createDispatch(
  options: DispatchSettings & {
    readonly formatter: TransactionFormatter;
    readonly hub: SubscriptionHub;
    readonly limiter: RateLimiter;
  },
): MessageDispatch {
  const { logger, upstream, hub, limiter } = options;
  const table: Record<string, Method> = { ...builtin, ...options.methods };
  const limits = { maxLogsRange: options.maxLogsRange };
  const protocolLimits = { maxBatch: options.maxBatch };
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
  /** The metrics' label children, kept (prom-client builds labels and a timer closure per call otherwise). */
  const counted = new Map<string, Counter.Internal>();
  const count = (method: string, source: string, outcome: string) => {
    const key = `${method}/${source}/${outcome}`;
    let child = counted.get(key);
    if (!child) counted.set(key, (child = requests.labels(method, source, outcome)));
    child.inc();
  };
  const timed = new Map<string, Histogram.Internal<string>>();
  const observe = (method: string, source: string, startedMs: number) => {
    const key = `${method}/${source}`;
    let child = timed.get(key);
    if (!child) timed.set(key, (child = duration.labels(method, source)));
    child.observe((performance.now() - startedMs) / 1000);
  };
  const overBudget = () => new LimitExceededError(`rate limit exceeded: at most ${options.rateLimit} calls per second per client`);

  /** What one message's calls met: served, or refused by which policy. */
  interface Tally {
    served: number;
    limited: number;
    forbidden: number;
  }

  /** The policy's refusal of this call, or undefined to serve it. Synchronous: a batch's calls take tokens in order. */
  const refusal = (method: string, caller: Caller, tally: Tally): JsonRpcError | undefined => {
    if (options.public && !limiter.take(caller.client, 1)) {
      tally.limited += 1;
      return overBudget();
    }
    const spec = methodSpecs.get(method);
    if (spec && !spec.transports.includes(caller.transport)) {
      tally.served += 1;
      return new MethodNotFoundError(
        method,
        `the method ${method} does not exist/is not available over ${transportName[caller.transport]}`,
      );
    }
    if (options.public && spec?.public === 'forbidden') {
      tally.forbidden += 1;
      return new ResourceUnavailableError(`${method} is not available on this public endpoint`);
    }
    tally.served += 1;
    return undefined;
  };

  const serveCall = async (call: RpcCall, caller: Caller, tally: Tally): Promise<unknown> => {
    const method = call.method;
    const refused = refusal(method, caller, tally);
    const handler = table[method];
    const label = handler ? method : 'other';
    const source = handler && methodSpecs.get(method)?.transports.includes('http') !== false ? 'view' : 'upstream';
    if (refused) {
      count(label, source, String(refused.rpcCode));
      throw refused;
    }
    const startedMs = performance.now();
    try {
      let result: unknown;
      const forward = async (params?: readonly unknown[]) => {
        const sent = (params ?? call.params ?? []) as unknown[];
        const asked = upstream.call(method, sent);
        // Pending reads at a pushed head wait for a `latest` read already on its way (node-head.ts `settle`).
        if (options.nodeHead && readsLatest(method, sent)) options.nodeHead.asking(asked);
        const answer = await asked;
        // A client that read the node's `latest` through the gateway never reads an older `pending` after it.
        const latest = options.nodeHead ? latestNamedBy(method, sent, answer) : undefined;
        if (latest !== undefined) options.nodeHead!.saw(latest);
        return answer;
      };
      if (handler) {
        const socket = caller.socket;
        const subscriptions = socket
          ? {
              subscribe: (params: readonly unknown[]) => hub.subscribe(socket, params),
              unsubscribe: (id: string) => hub.unsubscribe(socket, id),
            }
          : undefined;
        const context: MethodContext = {
          view: options.view,
          states$: options.states$,
          upstream,
          nodeHead: options.nodeHead,
          formatter: options.formatter,
          limits,
          forward,
          subscriptions,
        };
        result = await handler(paramsArray(call.params, method), context);
      } else {
        result = await forward();
      }
      count(label, source, 'ok');
      observe(label, source, startedMs);
      return result;
    } catch (error) {
      count(label, source, error instanceof JsonRpcError ? String(error.rpcCode) : 'internal');
      observe(label, source, startedMs);
      if (!(error instanceof JsonRpcError)) logger.warn({ method, err: errorMessage(error) }, 'call failed');
      throw error;
    }
  };

  return {
    async answer(text, caller) {
      const tally: Tally = { served: 0, limited: 0, forbidden: 0 };
      const body = await handleText(text, (call) => serveCall(call, caller, tally), protocolLimits);
      const calls = tally.served + tally.limited + tally.forbidden;
      // A message that reached no call (unparsable, no valid call in it) still costs one token.
      if (calls === 0 && options.public && !limiter.take(caller.client, 1)) {
        return { body: JSON.stringify(errorResponse(null, overBudget())), refused: 'rate-limit' };
      }
      if (calls > 0 && tally.served === 0) return { body, refused: tally.limited > 0 ? 'rate-limit' : 'public' };
      return { body };
    },
  };
}

const transportName: Readonly<Record<Transport, string>> = { http: 'HTTP', ws: 'WebSocket' };
