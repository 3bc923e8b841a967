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

let nextId = 1;

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

/** POSTs `body`; resolves with the status and the text, rejects on transport failure or timeout. */
function post(target: URL, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST', agent: agentFor(target),
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const timer = setTimeout(() => request.destroy(new UpstreamTimeout()), timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
}

export function createUpstream(url: string, options: UpstreamOptions): Upstream {
  const target = new URL(url);
  return {
    url,
    async call(method, params) {
      const id = nextId++;
      let answer: { status: number; text: string };
      try {
        answer = await post(target, JSON.stringify({ jsonrpc: '2.0', id, method, params }), options.timeoutMs);
      } catch (error) {
        throw new ServerError(error instanceof UpstreamTimeout
          ? `upstream RPC did not answer ${method} within ${options.timeoutMs} ms`
          : `upstream RPC unreachable: ${errorMessage((error as { cause?: unknown }).cause ?? error)}`, { retryable: true, cause: error });
      }
      const response = { status: answer.status };
      let body: unknown;
      try {
        body = JSON.parse(answer.text);
      } catch {
        throw new ServerError(`upstream RPC answered HTTP ${response.status} without a JSON-RPC body`, { retryable: true });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new ServerError(`upstream RPC answered HTTP ${response.status} with something other than a JSON-RPC response`);
      }
      const reply = body as { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
      if (reply.error !== undefined) {
        const code = typeof reply.error.code === 'number' ? reply.error.code : -32000;
        const message = typeof reply.error.message === 'string' ? reply.error.message : 'upstream error';
        throw new JsonRpcError(code, message, reply.error.data === undefined ? {} : { data: reply.error.data });
      }
      if (!('result' in reply)) throw new ServerError(`upstream RPC answered HTTP ${response.status} without result or error`);
      return reply.result;
    },
  };
}
