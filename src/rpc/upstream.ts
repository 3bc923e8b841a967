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

export function createUpstream(url: string, options: UpstreamOptions): Upstream {
  return {
    url,
    async call(method, params) {
      const id = nextId++;
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
        throw new ServerError(timedOut
          ? `upstream RPC did not answer ${method} within ${options.timeoutMs} ms`
          : `upstream RPC unreachable: ${errorMessage((error as { cause?: unknown }).cause ?? error)}`, { retryable: true, cause: error });
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch (error) {
        const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
        throw new ServerError(timedOut
          ? `upstream RPC did not answer ${method} within ${options.timeoutMs} ms`
          : `upstream RPC answered HTTP ${response.status} without a JSON-RPC body`, { retryable: true });
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
