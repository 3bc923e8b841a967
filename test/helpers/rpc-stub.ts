import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP JSON-RPC server with scripted answers, standing in for an upstream node in gateway
 * tests. A handler may return a value, throw `{code, message}` (answered as a JSON-RPC error) or
 * return `hang` (never answers). Methods without a handler answer -32601 as nodes do.
 */
export const hang = Symbol('hang');
export type StubHandler = (params: unknown[]) => unknown;

export interface RpcStub {
  readonly url: string;
  readonly calls: { method: string; params: unknown[] }[];
  handlers: Record<string, StubHandler>;
  close(): Promise<void>;
}

export async function createRpcStub(handlers: Record<string, StubHandler>): Promise<RpcStub> {
  const calls: { method: string; params: unknown[] }[] = [];
  const stub = { handlers } as { handlers: Record<string, StubHandler> };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string; params?: unknown[] };
      calls.push({ method: body.method, params: body.params ?? [] });
      const handler = stub.handlers[body.method];
      let payload: Record<string, unknown>;
      try {
        if (!handler) throw { code: -32601, message: `the method ${body.method} does not exist/is not available` };
        const result = handler(body.params ?? []);
        if (result === hang) return;
        payload = { jsonrpc: '2.0', id: body.id, result };
      } catch (error) {
        payload = { jsonrpc: '2.0', id: body.id, error };
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    get handlers() {
      return stub.handlers;
    },
    set handlers(value) {
      stub.handlers = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
