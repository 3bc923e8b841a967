import type { Observable } from 'rxjs';
import type { WebSocket } from 'ws';
import { errorMessage, JsonRpcError, MethodNotFoundError } from '../../errors.ts';
import type { RpcCall } from '../../jsonrpc/protocol.ts';
import type { Upstream } from '../../jsonrpc/upstream.ts';
import type { Logger } from '../../obs/logger.ts';
import { counter, histogram, type Registry } from '../../obs/metrics.ts';
import type { ViewState } from '../../view/state.ts';
import type { TransactionFormatter } from '../format.ts';
import { callable, type Method, type MethodContext } from '../method.ts';
import { paramsArray } from '../params.ts';
import { methodSpecs, registry } from '../registry.ts';
import type { SubscriptionHub } from '../subscriptions/hub.ts';

/** The registry's methods that need nothing beyond the view (the executing ones come in `methods`). */
const builtin: Readonly<Record<string, Method>> = Object.fromEntries(
  registry.filter((spec) => !spec.executes).map((spec) => [spec.name, callable(spec)]),
);
const websocketOnly = (method: string): boolean => methodSpecs.get(method)?.transports.includes('http') === false;

/** Answers one call: from the view when a method of the registry (or `methods`) has it, else the upstream. */
export type Dispatch = (call: RpcCall, socket?: WebSocket) => Promise<unknown>;

/**
 * The gateway's dispatch, shared by HTTP and WebSocket: the method table, WebSocket-only methods
 * refused over HTTP (-32601), and per-method metrics (calls by outcome, duration) labelled by
 * whether the view or the upstream answered.
 */
export function createDispatch(options: {
  readonly view: () => ViewState;
  readonly states$: Observable<ViewState>;
  readonly upstream: Upstream;
  readonly formatter: TransactionFormatter;
  readonly maxLogsRange: number;
  readonly methods?: Readonly<Record<string, Method>>;
  readonly hub: SubscriptionHub;
  readonly logger: Logger;
  readonly metrics: Registry;
}): Dispatch {
  const { logger, upstream, hub } = options;
  const table: Record<string, Method> = { ...builtin, ...options.methods };
  const limits = { maxLogsRange: options.maxLogsRange };
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

  return async (call, socket) => {
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
          formatter: options.formatter,
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
}
