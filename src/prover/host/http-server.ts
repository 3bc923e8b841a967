import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../jsonrpc/edge.ts';
import type { Logger } from '../../obs/logger.ts';
import { answerMetrics, type Registry } from '../../obs/metrics.ts';

/**
 * The prover host's HTTP side: `POST /` carries JSON-RPC (a body over `maxBodyBytes` is -32600;
 * the rest is `answer`'s), `GET /healthz` answers 200 {"version"} or 500, `GET /metrics` when
 * asked. Closing stops accepting and waits for the requests in flight (proofs included).
 */
export interface HostHttpOptions {
  /** Answers one JSON-RPC body (its text): the response's text, or null for notifications only. */
  readonly answer: (text: string) => Promise<string | null>;
  readonly health: () => Promise<{ ok: true } | { ok: false; message: string }>;
  readonly version: string;
  readonly maxBodyBytes: number;
  readonly logger?: Logger | undefined;
  /** Served on `GET /metrics` when given. */
  readonly metrics?: Registry | undefined;
}

export interface HostHttp {
  listen(host: string, port: number): Promise<{ url: string }>;
  close(): Promise<void>;
}

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', id: null, error: { code, message } });

export function createHostHttp(options: HostHttpOptions): HostHttp {
  const { logger, maxBodyBytes } = options;
  const inFlight = new Set<Promise<unknown>>();
  let server: Server | undefined;
  const track = (work: Promise<unknown>) => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  };
  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? '' : JSON.stringify(body));
  };
  const tooLarge = () => JSON.stringify(rpcError(-32600, `request body exceeds ${maxBodyBytes} bytes`));

  const onRequest = (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (options.metrics && answerMetrics(options.metrics, request, response)) return;
    if (request.method === 'GET' && path === '/healthz') {
      track(
        options.health().then((state) => {
          if (state.ok) send(response, 200, { version: options.version });
          else send(response, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
        }),
      );
      return;
    }
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST, GET' }).end();
      return;
    }
    track(
      readBody(request, response, maxBodyBytes, tooLarge).then((text) => {
        if (text === undefined) return;
        return options.answer(text).then(
          (out) => response.writeHead(200, { 'content-type': 'application/json' }).end(out ?? ''),
          (error: unknown) => {
            logger?.error({ err: error }, 'prover host request failed');
            send(response, 500, rpcError(-32603, 'Internal error'));
          },
        );
      }),
    );
  };

  return {
    async listen(host, port) {
      server = createServer(onRequest);
      server.requestTimeout = 0; // proofs may take up to the proof request timeout
      server.headersTimeout = 60_000;
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, host, () => resolve());
      });
      const address = server.address() as AddressInfo;
      return { url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}` };
    },
    async close() {
      const closed = server ? new Promise<void>((resolve) => server!.close(() => resolve())) : Promise.resolve();
      server?.closeIdleConnections();
      await Promise.allSettled([...inFlight]);
      server?.closeAllConnections();
      await closed;
    },
  };
}
