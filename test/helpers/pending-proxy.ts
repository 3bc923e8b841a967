import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in gateway for testing the checker: forwards every JSON-RPC call to the node with
 * `pending` read as `latest`, so each answer is the node's own for its newest block (an honest
 * gateway by construction). `lie` may alter one answer: a gateway that lies, which the checker
 * must catch.
 */
export interface PendingProxy {
  readonly url: string;
  close(): Promise<void>;
}

const asLatest = (value: unknown): unknown =>
  value === 'pending'
    ? 'latest'
    : Array.isArray(value)
      ? value.map(asLatest)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, asLatest(inner)]))
        : value;

export async function startPendingProxy(
  nodeUrl: string,
  lie?: (method: string, params: unknown[], result: unknown) => unknown,
): Promise<PendingProxy> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      try {
        const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params: unknown[] };
        const pending = JSON.stringify(call.params).includes('"pending"');
        const upstream = await fetch(nodeUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...call, params: asLatest(call.params) }),
        });
        const body = (await upstream.json()) as { result?: unknown };
        if (lie && pending && 'result' in body) body.result = lie(call.method, call.params, body.result);
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      } catch (error) {
        response.writeHead(502).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
