import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcError, ServerError } from '../errors.ts';
import { httpEndpoint, resultOf } from './endpoint.ts';

/** A server on 127.0.0.1 that answers eth_chainId, fails eth_blockNumber with HTTP 500, and never answers eth_syncing. */
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string };
      if (call.method === 'eth_syncing') return;
      if (call.method === 'eth_blockNumber') return void response.writeHead(500).end('overloaded');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'no such method' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('httpEndpoint: no answer is a retryable ServerError naming the endpoint', () => {
  it('an HTTP failure', async () => {
    const error = await httpEndpoint(url, 5_000)
      .call('eth_blockNumber', [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ code: 'RPC_-32000', retryable: true });
    expect((error as Error).message).toMatch(new RegExp(`^${url} answered eth_blockNumber with HTTP 500`));
  });

  it('a time limit passed', async () => {
    const error = await httpEndpoint(url, 200)
      .call('eth_syncing', [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ retryable: true, message: `${url} did not answer eth_syncing within 200 ms` });
  });

  it('a port nothing listens on', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await httpEndpoint(`http://127.0.0.1:${port}`, 5_000)
      .call('eth_chainId', [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).message).toMatch(new RegExp(`^http://127.0.0.1:${port} unreachable: `));
  });
});

describe('resultOf', () => {
  it('an error answer throws a JsonRpcError with the answer’s code, naming the method', async () => {
    const answer = await httpEndpoint(url, 5_000).call('eth_chainId', []);
    expect(answer).toEqual({ error: { code: -32601, message: 'no such method' } });
    const error = (() => {
      try {
        return resultOf('eth_chainId', answer);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(JsonRpcError);
    expect(error).toMatchObject({ code: 'RPC_-32601', rpcCode: -32601, message: 'eth_chainId: error -32601: no such method' });
  });

  it('a result answer gives the result', () => {
    expect(resultOf('eth_chainId', { result: '0x2105' })).toBe('0x2105');
  });
});
