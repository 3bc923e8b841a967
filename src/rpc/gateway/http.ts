import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage, InvalidRequestError, JsonRpcError, LimitExceededError, ResourceUnavailableError } from '../../errors.ts';
import { readBody, replyJson } from '../../jsonrpc/edge.ts';
import { errorResponse, handleText, parseMessage } from '../../jsonrpc/protocol.ts';
import type { Logger } from '../../obs/logger.ts';
import { answerMetrics, type Registry } from '../../obs/metrics.ts';
import type { ViewState } from '../../view/state.ts';
import type { RateLimiter } from '../rate-limit.ts';
import { methodSpecs } from '../registry.ts';
import type { Dispatch } from './dispatch.ts';

const publicForbidden = (method: string): boolean => methodSpecs.get(method)?.public === 'forbidden';

/**
 * The gateway over HTTP: JSON-RPC as POST (through the one JSON-RPC edge: body limit, batches,
 * codes), CORS for browser dapps, `GET /healthz`, `GET /metrics` when exposed (never in public
 * mode), and in public mode the per-client rate limit (429) and the methods refused there (403).
 */
export function createHttpHandler(options: {
  readonly view: () => ViewState;
  readonly dispatch: Dispatch;
  readonly limiter: RateLimiter;
  readonly public: boolean;
  readonly rateLimit: number;
  readonly maxBodyBytes: number;
  readonly maxBatch: number;
  readonly exposeMetrics?: boolean;
  readonly logger: Logger;
  readonly metrics: Registry;
}): (request: IncomingMessage, response: ServerResponse) => void {
  const { logger, limiter, dispatch } = options;
  const protocolLimits = { maxBatch: options.maxBatch };
  const reply = (response: ServerResponse, status: number, body: string | null): void =>
    replyJson(response, body === null ? 204 : status, body);
  const tooLarge = () =>
    JSON.stringify(
      errorResponse(null, new InvalidRequestError(`invalid request: body exceeds the limit of ${options.maxBodyBytes} bytes`)),
    );

  /** Public mode: the answer that refuses this body (429 or 403), or undefined to serve it. */
  const refusal = (request: IncomingMessage, text: string): [number, string] | undefined => {
    let calls: ReturnType<typeof parseMessage> | undefined;
    try {
      calls = parseMessage(JSON.parse(text), protocolLimits);
    } catch {
      calls = undefined; // handleText answers the parse error
    }
    const list = Array.isArray(calls) ? calls : [];
    const client = request.socket.remoteAddress ?? 'unknown';
    if (!limiter.take(client, Math.max(1, list.length))) {
      const error = new LimitExceededError(`rate limit exceeded: at most ${options.rateLimit} calls per second per client`);
      return [429, JSON.stringify(errorResponse(null, error))];
    }
    const forbidden = list.find((call) => !(call instanceof JsonRpcError) && publicForbidden(call.method));
    if (forbidden && !(forbidden instanceof JsonRpcError)) {
      const error = new ResourceUnavailableError(`${forbidden.method} is not available on this public endpoint`);
      return [403, JSON.stringify(errorResponse(forbidden.id ?? null, error))];
    }
    return undefined;
  };

  const serve = async (request: IncomingMessage, response: ServerResponse, text: string): Promise<void> => {
    const refused = options.public ? refusal(request, text) : undefined;
    if (refused) reply(response, ...refused);
    else reply(response, 200, await handleText(text, (call) => dispatch(call), protocolLimits));
  };

  return (request, response) => {
    // Browser dapps call the RPC directly: allow any origin, as public Ethereum endpoints do.
    response.setHeader('access-control-allow-origin', '*');
    if (request.method === 'OPTIONS') {
      response
        .writeHead(204, {
          'access-control-allow-methods': 'POST, GET, OPTIONS',
          'access-control-allow-headers': 'content-type',
          'access-control-max-age': '86400',
        })
        .end();
      return;
    }
    if (options.exposeMetrics && !options.public && answerMetrics(options.metrics, request, response)) return;
    if (request.method === 'GET' && (request.url === '/healthz' || request.url === '/health')) {
      reply(response, 200, JSON.stringify({ ok: true, blocks: options.view().blocks.length }));
      return;
    }
    if (request.method !== 'POST') {
      response
        .writeHead(405, { allow: 'POST', 'content-type': 'application/json' })
        .end(JSON.stringify(errorResponse(null, new InvalidRequestError('invalid request: JSON-RPC calls are HTTP POST'))));
      return;
    }
    void readBody(request, response, options.maxBodyBytes, tooLarge)
      .then((text) => (text === undefined ? undefined : serve(request, response, text)))
      .catch((error: unknown) => {
        logger.error({ err: errorMessage(error) }, 'request failed');
        if (!response.headersSent) reply(response, 500, JSON.stringify(errorResponse(null, error)));
      });
  };
}
