import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage, InvalidRequestError } from '../../errors.ts';
import { readBody, replyJson } from '../../jsonrpc/edge.ts';
import { errorResponse } from '../../jsonrpc/protocol.ts';
import type { Logger } from '../../obs/logger.ts';
import { answerMetrics, type Registry } from '../../obs/metrics.ts';
import type { ViewState } from '../../view/state.ts';
import type { MessageAnswer, MessageDispatch } from './dispatch.ts';

/** HTTP's status for an answer: 429 when the rate limit refused every call of it, 403 when the public policy did. */
const statusOf = (answer: MessageAnswer): number => (answer.refused === 'rate-limit' ? 429 : answer.refused === 'public' ? 403 : 200);

/**
 * The gateway over HTTP: JSON-RPC as POST (through the one JSON-RPC edge: body limit), CORS for
 * browser dapps, `GET /healthz`, `GET /metrics` when exposed (never in public mode). Calls go to
 * the one dispatch (dispatch.ts), which holds public mode's policy for every transport; a message
 * it refused whole is answered 429 (rate limit) or 403 (a method refused in public mode).
 */
export function createHttpHandler(options: {
  readonly view: () => ViewState;
  readonly dispatch: MessageDispatch;
  readonly public: boolean;
  readonly maxBodyBytes: number;
  readonly exposeMetrics?: boolean;
  readonly logger: Logger;
  readonly metrics: Registry;
}): (request: IncomingMessage, response: ServerResponse) => void {
  const { logger, dispatch } = options;
  const reply = (response: ServerResponse, status: number, body: string | null): void =>
    replyJson(response, body === null ? 204 : status, body);
  const tooLarge = () =>
    JSON.stringify(
      errorResponse(null, new InvalidRequestError(`invalid request: body exceeds the limit of ${options.maxBodyBytes} bytes`)),
    );

  const serve = async (request: IncomingMessage, response: ServerResponse, text: string): Promise<void> => {
    const answer = await dispatch.answer(text, { transport: 'http', client: request.socket.remoteAddress ?? 'unknown' });
    reply(response, statusOf(answer), answer.body);
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
