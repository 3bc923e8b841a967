import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * The upstream client's HTTP side: one POST of a JSON text on a kept-alive socket, within a
 * deadline, with a limit on the reply's size. node:http rather than fetch: on the eth_call pending
 * path fetch's web streams cost the gateway about as much CPU as the rest of the request
 * (bench/calls.ts, a CPU profile); fetch also has no limit on what it reads.
 */
export interface PostOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /** Largest reply body read; a larger one (declared or found while reading) is broken off. */
  readonly maxReplyBytes: number;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** What one POST came back with; a failure says which (the caller words it). */
export type PostOutcome =
  | { readonly kind: 'answered'; readonly status: number; readonly text: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'too_large'; readonly limitBytes: number }
  | { readonly kind: 'unreachable'; readonly cause: unknown };

/**
 * Keep-alive agents per origin, shared by every client (a request's deadline-bound client is made
 * per call, so the sockets must outlive it).
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

class Timeout extends Error {}
class Aborted extends Error {}
class TooLarge extends Error {}
/**
 * A kept-alive socket the server closed just as it was reused (its idle timeout): the request
 * never reached the server, so it is sent once more on a new socket, as Node's http documentation
 * advises (`request.reusedSocket`).
 */
class StaleSocket extends Error {}

function postOn(target: URL, body: string, options: PostOptions, fresh: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      target,
      {
        method: 'POST',
        agent: fresh ? false : agentFor(target),
        headers: { ...options.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const tooLarge = () => {
          settle();
          reject(new TooLarge());
          request.destroy();
        };
        if (Number(response.headers['content-length'] ?? 0) > options.maxReplyBytes) {
          tooLarge();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxReplyBytes) tooLarge();
          else chunks.push(chunk);
        });
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
    const timer = setTimeout(() => request.destroy(new Timeout()), options.timeoutMs);
    const abort = () => request.destroy(new Aborted());
    options.signal?.addEventListener('abort', abort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abort);
    };
    request.on('error', (error) => {
      settle();
      const code = (error as NodeJS.ErrnoException).code;
      reject(
        request.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE') ? new StaleSocket(error.message, { cause: error }) : error,
      );
    });
    if (options.signal?.aborted) abort();
    request.end(body);
  });
}

/** POSTs `body` to `target`, once more on a socket of its own when the kept-alive one was already closed. */
export async function postJson(target: URL, body: string, options: PostOptions): Promise<PostOutcome> {
  try {
    try {
      return { kind: 'answered', ...(await postOn(target, body, options, false)) };
    } catch (error) {
      if (!(error instanceof StaleSocket)) throw error;
      return { kind: 'answered', ...(await postOn(target, body, options, true)) };
    }
  } catch (error) {
    if (error instanceof Timeout) return { kind: 'timeout' };
    if (error instanceof Aborted) return { kind: 'aborted' };
    if (error instanceof TooLarge) return { kind: 'too_large', limitBytes: options.maxReplyBytes };
    return { kind: 'unreachable', cause: (error as { cause?: unknown }).cause ?? error };
  }
}
