import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { JsonRpcError, ServerError, errorMessage } from '../errors.ts';

/**
 * The upstream JSON-RPC (canonical state). Errors the upstream answers pass through with their
 * codes; a transport failure or timeout becomes a -32000 ServerError that says which.
 */
export interface Upstream {
  readonly url: string;
  call(method: string, params: readonly unknown[]): Promise<unknown>;
}

export interface UpstreamOptions {
  readonly timeoutMs: number;
}

/**
 * Keep-alive agents per origin, shared by every Upstream (a request's deadline-bound Upstream is
 * made per call). node:http rather than fetch: on the eth_call pending path fetch's web streams
 * cost the gateway about as much CPU as the rest of the request (bench/calls.ts, a CPU profile).
 */
const agents = new Map<string, HttpAgent>();
function agentFor(target: URL): HttpAgent {
  let agent = agents.get(target.origin);
  if (!agent) {
    const options = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const };
    agent = target.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    agents.set(target.origin, agent);
  }
  return agent;
}

class UpstreamTimeout extends Error {}

class UpstreamAborted extends Error {}

/**
 * A kept-alive socket the server closed just as it was reused (its idle timeout): the request
 * never reached the server, so it is sent once more on a new socket, as Node's http documentation
 * advises (`request.reusedSocket`).
 */
class StaleSocket extends Error {}

/**
 * POSTs `body` (on a pooled keep-alive socket, or on a new one of its own when `fresh`); resolves
 * with the status and the text, rejects on transport failure, timeout or abort.
 */
function post(
  target: URL,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
  fresh = false,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      target,
      {
        method: 'POST',
        agent: fresh ? false : agentFor(target),
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          settle();
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', (error) => {
          settle();
          reject(error);
        });
      },
    );
    const timer = setTimeout(() => request.destroy(new UpstreamTimeout()), timeoutMs);
    const abort = () => request.destroy(new UpstreamAborted('the operation was aborted'));
    signal?.addEventListener('abort', abort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    };
    request.on('error', (error) => {
      settle();
      const code = (error as NodeJS.ErrnoException).code;
      reject(
        request.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') ? new StaleSocket(error.message, { cause: error }) : error,
      );
    });
    if (signal?.aborted) abort();
    request.end(body);
  });
}

/** `post`, sent once more on a socket of its own when the kept-alive one it reused was already closed. */
async function postOnce(target: URL, body: string, timeoutMs: number, signal?: AbortSignal): Promise<{ status: number; text: string }> {
  try {
    return await post(target, body, timeoutMs, signal);
  } catch (error) {
    if (!(error instanceof StaleSocket)) throw error;
    return post(target, body, timeoutMs, signal, true);
  }
}

/**
 * One JSON-RPC call's outcome, before anyone words it: the project's one upstream JSON-RPC client
 * (the gateway's Upstream and the prover bridge's host client both call through it).
 */
export type Exchange =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'error'; readonly code: number; readonly message: string; readonly data?: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'unreachable'; readonly cause: unknown }
  /** HTTP answered, but not with a JSON-RPC response; `json` says whether the body parsed at all. */
  | { readonly kind: 'malformed'; readonly status: number; readonly json: boolean; readonly detail: string };

/** An exchange that got a JSON-RPC response: `{result}`, or `{error}` with its code and message. */
export type Answered = { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string } };

/** The JSON-RPC response of an exchange that got one; the other kinds are the caller's to word. */
export function answeredOf(answer: Extract<Exchange, { kind: 'result' | 'error' }>): Answered {
  return answer.kind === 'result' ? { result: answer.result } : { error: { code: answer.code, message: answer.message } };
}

let nextId = 1;

/** Calls `method` at `url` (keep-alive, node:http) within `timeoutMs`, or until `signal` aborts. */
export async function exchange(
  url: string | URL,
  method: string,
  params: readonly unknown[],
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<Exchange> {
  const target = typeof url === 'string' ? new URL(url) : url;
  let answer: { status: number; text: string };
  try {
    answer = await postOnce(target, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), options.timeoutMs, options.signal);
  } catch (error) {
    return error instanceof UpstreamTimeout
      ? { kind: 'timeout' }
      : { kind: 'unreachable', cause: (error as { cause?: unknown }).cause ?? error };
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch (error) {
    return { kind: 'malformed', status: answer.status, json: false, detail: errorMessage(error) };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { kind: 'malformed', status: answer.status, json: true, detail: 'something other than a JSON-RPC response' };
  }
  const reply = body as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
  if (reply.error !== undefined && reply.error !== null) {
    return {
      kind: 'error',
      code: typeof reply.error.code === 'number' ? reply.error.code : -32000,
      message: typeof reply.error.message === 'string' ? reply.error.message : 'upstream error',
      ...(reply.error.data === undefined ? {} : { data: reply.error.data }),
    };
  }
  if (!('result' in reply)) return { kind: 'malformed', status: answer.status, json: true, detail: 'without result or error' };
  return { kind: 'result', result: reply.result };
}

export function createUpstream(url: string, options: UpstreamOptions): Upstream {
  const target = new URL(url);
  return {
    url,
    async call(method, params) {
      const answer = await exchange(target, method, params, options);
      switch (answer.kind) {
        case 'result':
          return answer.result;
        case 'error':
          throw new JsonRpcError(answer.code, answer.message, answer.data === undefined ? {} : { data: answer.data });
        case 'timeout':
          throw new ServerError(`upstream RPC did not answer ${method} within ${options.timeoutMs} ms`, { retryable: true });
        case 'unreachable':
          throw new ServerError(`upstream RPC unreachable: ${errorMessage(answer.cause)}`, { retryable: true, cause: answer.cause });
        case 'malformed':
          if (!answer.json)
            throw new ServerError(`upstream RPC answered HTTP ${answer.status} without a JSON-RPC body`, { retryable: true });
          throw new ServerError(
            `upstream RPC answered HTTP ${answer.status} ${answer.detail === 'without result or error' ? answer.detail : `with ${answer.detail}`}`,
          );
      }
    },
  };
}
