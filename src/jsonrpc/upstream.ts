import { JsonRpcError, ServerError, errorMessage } from '../errors.ts';
import type { CallRpc } from './protocol.ts';
import { postJson, type PostOutcome } from './http-post.ts';

/**
 * The project's one upstream JSON-RPC client (JSON-RPC 2.0 over HTTP POST,
 * https://www.jsonrpc.org/specification): single calls and batches to a node, each within a
 * deadline and under a limit on the reply's size, on kept-alive sockets (./http-post.ts). The
 * gateway, the sources, the executors, the prover's node reads, the prover bridge's host client,
 * the checker and the devnet's nodes all call through it.
 *
 * Two layers: `exchange` / `exchangeBatch` give each call's outcome before anyone words it (the
 * checker and the prover bridge word their own); `createUpstream` words them as catalogue errors:
 * the upstream's own JSON-RPC errors pass through as `JsonRpcError`s with their code, message and
 * data; a timeout, a transport failure or a reply that is not JSON-RPC is a -32000 `ServerError`
 * naming the endpoint and the method.
 *
 * viem's http transport is not the one client: it reads replies with fetch (its web streams cost
 * the gateway's pending eth_call path about as much CPU as the rest of the request, bench/calls.ts),
 * has no limit on a reply's size, and throws viem's error classes rather than the catalogue's.
 * Where a viem client is needed (a contract read) it takes this client through viem's `custom`
 * transport.
 */
export interface Upstream {
  readonly url: string;
  call(method: string, params: readonly unknown[]): Promise<unknown>;
}

/** One call of a batch. */
export interface RpcRequest {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** One call's answer in a batch: its result, or its own JSON-RPC error (the others are unaffected). */
export type BatchItem = { readonly result: unknown } | { readonly error: JsonRpcError };

/** An Upstream that also sends batches. */
export interface UpstreamClient extends Upstream {
  /**
   * Sends `calls` as one JSON-RPC batch and answers each in
   * order, matched by id. Throws (like `call`) when the batch as a whole got no JSON-RPC answer.
   */
  batch(calls: readonly RpcRequest[]): Promise<BatchItem[]>;
}

/** A reply larger than this is broken off, unless a caller sets its own limit. */
export const defaultMaxReplyBytes = 128 * 1024 * 1024;

export interface ExchangeOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Largest reply body read (default `defaultMaxReplyBytes`). */
  readonly maxReplyBytes?: number | undefined;
  /** Extra request headers (the engine API's JWT). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

export interface UpstreamOptions extends ExchangeOptions {
  /**
   * How errors name the endpoint (default `upstream RPC <origin>`: the URL without credentials,
   * path or query, which may hold an API key). The gateway says only `upstream RPC`, as its
   * answers go to the public.
   */
  readonly label?: string | undefined;
  /**
   * Calls sent again after a failure that may pass (a timeout, a transport failure, a reply that
   * is not JSON, the codes -32005, -32603, -32007 and 429), waiting `retryDelayMs` (150) doubling
   * each time. Default 0. The rule is viem's `shouldRetry` (viem@2.57.20, utils/buildRequest.ts),
   * which the prover's node reads used before.
   */
  readonly retries?: number | undefined;
  readonly retryDelayMs?: number | undefined;
  /**
   * Words the upstream's JSON-RPC errors `<label> <method>: <message>` (for an operator reading a
   * proof's failure). Default false: they pass through unchanged, as the gateway answers them.
   */
  readonly namedErrors?: boolean | undefined;
}

/** One call's outcome, before anyone words it. */
export type Exchange =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data?: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'unreachable'; readonly cause: unknown }
  /** HTTP answered, but not with a JSON-RPC response; `json` says whether the body parsed at all. */
  | { readonly kind: 'malformed'; readonly status: number; readonly json: boolean; readonly detail: string }
  /** The reply was larger than the limit and was broken off. */
  | { readonly kind: 'too_large'; readonly limitBytes: number };

/** An exchange that did not end in a result. */
export type FailedExchange = Exclude<Exchange, { kind: 'result' }>;

/** An exchange that got a JSON-RPC response: `{result}`, or `{error}` with its code and message. */
export type Answered = { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string } };

/** The JSON-RPC response of an exchange that got one; the other kinds are the caller's to word. */
export function answeredOf(answer: Extract<Exchange, { kind: 'result' | 'error' }>): Answered {
  return answer.kind === 'result' ? { result: answer.result } : { error: { code: answer.code, message: answer.message } };
}

let nextId = 1;

/** The outcome of a POST that got no HTTP answer, as an exchange. */
function unanswered(outcome: Exclude<PostOutcome, { kind: 'answered' }>): FailedExchange {
  switch (outcome.kind) {
    case 'aborted':
      return { kind: 'unreachable', cause: new DOMException('the operation was aborted', 'AbortError') };
    default:
      return outcome;
  }
}

/** One parsed JSON-RPC response object (of a single call, or an item of a batch). */
function replyOf(reply: unknown, status: number): Exchange {
  if (typeof reply !== 'object' || reply === null || Array.isArray(reply)) {
    return { kind: 'malformed', status, json: true, detail: 'something other than a JSON-RPC response' };
  }
  const { error, result } = reply as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } | null };
  if (error !== undefined && error !== null) {
    return {
      kind: 'error',
      code: typeof error.code === 'number' ? error.code : -32000,
      message: typeof error.message === 'string' ? error.message : 'upstream error',
      ...(error.data === undefined ? {} : { data: error.data }),
    };
  }
  if (!('result' in reply)) return { kind: 'malformed', status, json: true, detail: 'without result or error' };
  return { kind: 'result', result };
}

async function post(
  url: string | URL,
  body: unknown,
  options: ExchangeOptions,
): Promise<FailedExchange | { status: number; json: unknown }> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const outcome = await postJson(target, JSON.stringify(body), {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxReplyBytes: options.maxReplyBytes ?? defaultMaxReplyBytes,
    headers: options.headers,
  });
  if (outcome.kind !== 'answered') return unanswered(outcome);
  try {
    return { status: outcome.status, json: JSON.parse(outcome.text) as unknown };
  } catch (error) {
    return { kind: 'malformed', status: outcome.status, json: false, detail: errorMessage(error) };
  }
}

/**
 * Calls `method` at `url` within `options.timeoutMs`, or until `options.signal` aborts.
 *
 * @example const answer = await exchange('http://127.0.0.1:8545', 'eth_blockNumber', [], { timeoutMs: 5000 })
 */
export async function exchange(url: string | URL, method: string, params: readonly unknown[], options: ExchangeOptions): Promise<Exchange> {
  const answer = await post(url, { jsonrpc: '2.0', id: nextId++, method, params }, options);
  return 'kind' in answer ? answer : replyOf(answer.json, answer.status);
}

/** A batch's outcome: one for the whole batch when it got no JSON-RPC answer, else one per call in order. */
async function batchOutcome(
  url: string | URL,
  calls: readonly RpcRequest[],
  options: ExchangeOptions,
): Promise<{ readonly whole: FailedExchange } | { readonly items: Exchange[] }> {
  const ids = calls.map(() => nextId++);
  const answer = await post(
    url,
    calls.map((call, i) => ({ jsonrpc: '2.0', id: ids[i], method: call.method, params: call.params })),
    options,
  );
  if ('kind' in answer) return { whole: answer };
  if (!Array.isArray(answer.json)) {
    const whole = replyOf(answer.json, answer.status);
    return {
      whole:
        whole.kind === 'result' ? { kind: 'malformed', status: answer.status, json: true, detail: 'one result for a whole batch' } : whole,
    };
  }
  const byId = new Map<unknown, unknown>();
  for (const reply of answer.json as unknown[]) {
    if (typeof reply === 'object' && reply !== null) byId.set((reply as { id?: unknown }).id, reply);
  }
  return {
    items: ids.map((id) =>
      byId.has(id)
        ? replyOf(byId.get(id), answer.status)
        : { kind: 'malformed', status: answer.status, json: true, detail: `no reply with id ${id} in the batch` },
    ),
  };
}

/**
 * Sends `calls` as one JSON-RPC batch and gives each call's outcome in order, matched by id: a
 * call the node answered no reply for is `malformed`; a failure of the whole batch (a timeout, a
 * transport failure, a body that is not JSON, one error object for the whole batch as a node
 * that refuses batches answers) is every call's outcome.
 *
 * @example const [chainId, head] = await exchangeBatch(url, [{ method: 'eth_chainId', params: [] }, { method: 'eth_blockNumber', params: [] }], { timeoutMs: 5000 })
 */
export async function exchangeBatch(url: string | URL, calls: readonly RpcRequest[], options: ExchangeOptions): Promise<Exchange[]> {
  if (calls.length === 0) return [];
  const outcome = await batchOutcome(url, calls, options);
  return 'whole' in outcome ? calls.map(() => outcome.whole) : outcome.items;
}

/**
 * How the gateway's errors name its upstream: its answers go to the public, who need not learn
 * where the node is.
 */
export const publicUpstreamLabel = 'upstream RPC';

/** The upstream's name in errors: the URL's origin (no credentials, path or query). */
export function upstreamLabel(url: string | URL): string {
  return `upstream RPC ${(typeof url === 'string' ? new URL(url) : url).origin}`;
}

/** A failed exchange as the catalogue error `createUpstream` throws, naming the endpoint and the method. */
export function exchangeError(
  answer: FailedExchange,
  method: string,
  where: { readonly label: string; readonly timeoutMs: number; readonly namedErrors?: boolean | undefined },
): JsonRpcError {
  const { label } = where;
  switch (answer.kind) {
    case 'error': {
      const data = answer.data === undefined ? {} : { data: answer.data };
      if (!where.namedErrors) return new JsonRpcError(answer.code, answer.message, data);
      const detail = answer.data === undefined ? '' : ` (data: ${JSON.stringify(answer.data)?.slice(0, 200)})`;
      return new JsonRpcError(answer.code, `${label} ${method}: ${answer.message}${detail}`, data);
    }
    case 'timeout':
      return new ServerError(`${label} did not answer ${method} within ${where.timeoutMs} ms`, { retryable: true });
    case 'unreachable':
      return new ServerError(`${label} unreachable: ${errorMessage(answer.cause)} (${method})`, { retryable: true, cause: answer.cause });
    case 'too_large':
      return new ServerError(`${label} answered ${method} with a reply over ${answer.limitBytes} bytes`);
    case 'malformed':
      if (!answer.json)
        return new ServerError(`${label} answered ${method} with HTTP ${answer.status} without a JSON-RPC body`, { retryable: true });
      if (answer.detail.startsWith('no reply'))
        return new ServerError(`${label} answered ${method} with HTTP ${answer.status} but ${answer.detail}`, { retryable: true });
      return new ServerError(
        `${label} answered ${method} with HTTP ${answer.status} ${answer.detail.startsWith('without') ? answer.detail : `with ${answer.detail}`}`,
      );
  }
}

/** Whether a failed call may pass when sent again (viem@2.57.20 utils/buildRequest.ts `shouldRetry`, in catalogue terms). */
function mayPass(error: JsonRpcError): boolean {
  if (error instanceof ServerError) return error.retryable;
  return [-32005, -32603, -32007, 429].includes(error.rpcCode);
}

/**
 * The client of one upstream: `call` (the result, or a thrown catalogue error) and `batch`.
 *
 * @example const node = createUpstream('http://127.0.0.1:8545', { timeoutMs: 5000 }); await node.call('eth_chainId', [])
 */
export function createUpstream(url: string, options: UpstreamOptions): UpstreamClient {
  const target = new URL(url);
  const where = { label: options.label ?? upstreamLabel(target), timeoutMs: options.timeoutMs, namedErrors: options.namedErrors };
  const retries = options.retries ?? 0;
  const retryDelayMs = options.retryDelayMs ?? 150;

  async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
    for (let count = 0; ; count++) {
      try {
        return await attempt();
      } catch (error) {
        if (count >= retries || options.signal?.aborted || !(error instanceof JsonRpcError) || !mayPass(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs * 2 ** count));
      }
    }
  }

  return {
    url,
    call: (method, params) =>
      withRetries(async () => {
        const answer = await exchange(target, method, params, options);
        if (answer.kind === 'result') return answer.result;
        throw exchangeError(answer, method, where);
      }),
    batch: (calls) =>
      withRetries(async () => {
        if (calls.length === 0) return [];
        const outcome = await batchOutcome(target, calls, options);
        if ('whole' in outcome) {
          throw exchangeError(outcome.whole, batchName(calls), where);
        }
        return outcome.items.map((answer, i): BatchItem => {
          if (answer.kind === 'result') return { result: answer.result };
          return { error: exchangeError(answer, calls[i]!.method, where) };
        });
      }),
  };
}

/** A batch's methods for an error message: `eth_getBalance ×3, eth_getCode`. */
function batchName(calls: readonly RpcRequest[]): string {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
  const names = [...counts].map(([method, count]) => (count > 1 ? `${method} ×${count}` : method));
  return `a batch of ${names.join(', ')}`;
}

/**
 * A `CallRpc` over HTTP to `url`: `timeoutMs` per call, two retries of what may pass, errors
 * naming the node and the method (the prover's node reads).
 */
export function httpCallRpc(url: string, timeoutMs: number): CallRpc {
  // A large block's execution witness is tens of MB; the limit here is about the longest string
  // V8 makes (2^29 - 24 characters), so only what could not be read anyway is refused.
  const upstream = createUpstream(url, { timeoutMs, retries: 2, namedErrors: true, maxReplyBytes: 512 * 1024 * 1024 - 24 });
  return (method, params) => upstream.call(method, params);
}
