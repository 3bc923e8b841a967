import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonRpcError, ServerError } from '../errors.ts';
import { createUpstream, exchange, publicUpstreamLabel } from './upstream.ts';

/**
 * The upstream client over kept-alive sockets: a node closes an idle kept-alive connection (its
 * keep-alive timeout) just as the client reuses it, and the request dies with "socket hang up"
 * although the node never saw it. The server here answers the first request of every connection
 * and resets the connection on its second, deterministically.
 */
let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A node that answers one request per connection, keeps it alive, and resets it when it is reused. */
async function oneRequestPerConnection(): Promise<{ url: string; requests: () => number; connections: () => number }> {
  let requests = 0;
  let connections = 0;
  server = createServer((socket) => {
    connections++;
    sockets.push(socket);
    let served = 0;
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      const { id } = JSON.parse(text.slice(end + 4, end + 4 + length)) as { id: number };
      text = '';
      if (served++ > 0) {
        socket.resetAndDestroy();
        return;
      }
      requests++;
      const body = JSON.stringify({ jsonrpc: '2.0', id, result: '0x2a' });
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`,
      );
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests, connections: () => connections };
}

describe('exchange over a kept-alive socket the node has closed', () => {
  it('sends the request once more on a socket of its own, and the node answers it', async () => {
    const node = await oneRequestPerConnection();
    expect(await exchange(node.url, 'eth_blockNumber', [], { timeoutMs: 2000 })).toEqual({ kind: 'result', result: '0x2a' });
    // The second call reuses the kept-alive socket, which the node resets: answered all the same.
    expect(await exchange(node.url, 'eth_blockNumber', [], { timeoutMs: 2000 })).toEqual({ kind: 'result', result: '0x2a' });
    expect(node.requests()).toBe(2);
    expect(node.connections()).toBe(2);
  });

  it('a fresh connection that fails is not sent again: unreachable', async () => {
    server = createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    const answer = await exchange(`http://127.0.0.1:${port}`, 'eth_blockNumber', [], { timeoutMs: 2000 });
    expect(answer.kind).toBe('unreachable');
  });
});

/** A node on 127.0.0.1 whose every POST is answered by `answer` (its parsed body in, status and text out; null: never answer). */
async function scriptedNode(
  answer: (body: unknown, seen: number) => { status?: number; text: string; chunked?: boolean } | null,
): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  const node = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      bodies.push(body);
      const reply = answer(body, bodies.length);
      if (reply === null) return;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (!reply.chunked) headers['content-length'] = String(Buffer.byteLength(reply.text));
      response.writeHead(reply.status ?? 200, headers);
      if (reply.chunked) {
        // Sent in pieces without a content-length: the limit must hold while reading.
        for (let at = 0; at < reply.text.length; at += 256) response.write(reply.text.slice(at, at + 256));
        response.end();
      } else response.end(reply.text);
    });
  });
  httpServers.push(node);
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', () => resolve()));
  const { port } = node.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies };
}

const httpServers: HttpServer[] = [];
afterEach(async () => {
  for (const node of httpServers.splice(0)) {
    node.closeAllConnections();
    await new Promise<void>((resolve) => node.close(() => resolve()));
  }
});

type Call = { id: number; method: string; params: unknown[] };

describe('createUpstream against a node on 127.0.0.1', () => {
  it('sends a batch as one POST and answers each call by id, an error beside the results', async () => {
    // The node answers out of order, the second call with an error of its own.
    const node = await scriptedNode((body) => {
      const replies = (body as Call[]).map((call) =>
        call.method === 'eth_call'
          ? { jsonrpc: '2.0', id: call.id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } }
          : { jsonrpc: '2.0', id: call.id, result: `${call.method}:${String(call.params[0])}` },
      );
      return { text: JSON.stringify(replies.reverse()) };
    });
    const upstream = createUpstream(node.url, { timeoutMs: 2000 });
    const items = await upstream.batch([
      { method: 'eth_getBalance', params: ['0xaa', 'latest'] },
      { method: 'eth_call', params: [{ to: '0xbb' }, 'latest'] },
      { method: 'eth_getCode', params: ['0xcc', 'latest'] },
    ]);
    expect(node.bodies).toHaveLength(1);
    expect((node.bodies[0] as Call[]).map((call) => call.method)).toEqual(['eth_getBalance', 'eth_call', 'eth_getCode']);
    expect(items[0]).toEqual({ result: 'eth_getBalance:0xaa' });
    expect(items[2]).toEqual({ result: 'eth_getCode:0xcc' });
    const failed = items[1] as { error: JsonRpcError };
    expect(failed.error).toBeInstanceOf(JsonRpcError);
    expect(failed.error.toJSON()).toEqual({ code: 3, message: 'execution reverted', data: '0x08c379a0' });
  });

  it('a call the node answered no reply for is that call’s error, naming its method; the rest are answered', async () => {
    const node = await scriptedNode((body) => ({
      text: JSON.stringify((body as Call[]).slice(1).map((call) => ({ jsonrpc: '2.0', id: call.id, result: '0x1' }))),
    }));
    const items = await createUpstream(node.url, { timeoutMs: 2000 }).batch([
      { method: 'eth_chainId', params: [] },
      { method: 'eth_blockNumber', params: [] },
    ]);
    expect(items[1]).toEqual({ result: '0x1' });
    const missing = (items[0] as { error: JsonRpcError }).error;
    expect(missing).toBeInstanceOf(ServerError);
    expect(missing.message).toMatch(/^upstream RPC http:\/\/127\.0\.0\.1:\d+ answered eth_chainId with HTTP 200 but no reply with id \d+/);
    expect(missing.retryable).toBe(true);
  });

  it('one error object for a whole batch (a node that refuses batches) fails the batch with that error', async () => {
    const node = await scriptedNode(() => ({
      text: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }),
    }));
    const failure = await createUpstream(node.url, { timeoutMs: 2000 })
      .batch([
        { method: 'eth_getCode', params: ['0x01', 'latest'] },
        { method: 'eth_getCode', params: ['0x02', 'latest'] },
      ])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JsonRpcError);
    expect((failure as JsonRpcError).rpcCode).toBe(-32600);
    expect((failure as JsonRpcError).message).toBe('batch too large');
  });

  it.each([
    ['with a content-length', false],
    ['in chunks without one', true],
  ])('a reply over the limit (%s) is broken off: -32000 naming the method and the node', async (_, chunked) => {
    const node = await scriptedNode((body) => ({
      text: JSON.stringify({ jsonrpc: '2.0', id: (body as Call).id, result: 'ab'.repeat(2048) }),
      chunked,
    }));
    const failure = await createUpstream(node.url, { timeoutMs: 2000, maxReplyBytes: 1024 })
      .call('debug_executionWitness', ['0x7'])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServerError);
    expect((failure as ServerError).message).toBe(`upstream RPC ${node.url} answered debug_executionWitness with a reply over 1024 bytes`);
    expect((failure as ServerError).retryable).toBe(false);
    // The same node's reply under a larger limit is read whole.
    expect(await createUpstream(node.url, { timeoutMs: 2000, maxReplyBytes: 8192 }).call('debug_executionWitness', ['0x7'])).toBe(
      'ab'.repeat(2048),
    );
  });

  it('a reply that is not JSON (a proxy’s error page) is a retryable -32000 naming the status, the method and the node', async () => {
    const node = await scriptedNode(() => ({ status: 502, text: '<html><body>Bad Gateway</body></html>' }));
    const failure = await createUpstream(node.url, { timeoutMs: 2000 })
      .call('eth_blockNumber', [])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServerError);
    expect((failure as ServerError).message).toBe(
      `upstream RPC ${node.url} answered eth_blockNumber with HTTP 502 without a JSON-RPC body`,
    );
    expect((failure as ServerError).retryable).toBe(true);
    expect((failure as ServerError).code).toBe('RPC_-32000');
  });

  it('a node that never answers: a retryable -32000 after the timeout, naming the method', async () => {
    const node = await scriptedNode(() => null);
    const failure = await createUpstream(node.url, { timeoutMs: 150 })
      .call('eth_gasPrice', [])
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ServerError);
    expect((failure as ServerError).message).toBe(`upstream RPC ${node.url} did not answer eth_gasPrice within 150 ms`);
    expect((failure as ServerError).retryable).toBe(true);
  });

  it('retries what may pass, and only as often as asked', async () => {
    const node = await scriptedNode((body, seen) =>
      seen <= 2
        ? { status: 503, text: 'unavailable' }
        : { text: JSON.stringify({ jsonrpc: '2.0', id: (body as Call).id, result: '0x2a' }) },
    );
    await expect(createUpstream(node.url, { timeoutMs: 2000, retries: 1, retryDelayMs: 1 }).call('eth_blockNumber', [])).rejects.toThrow(
      /HTTP 503 without a JSON-RPC body/,
    );
    expect(node.bodies).toHaveLength(2);
    // Two more failures would follow the first; this node now answers on its third request.
    expect(await createUpstream(node.url, { timeoutMs: 2000, retries: 2, retryDelayMs: 1 }).call('eth_blockNumber', [])).toBe('0x2a');
    expect(node.bodies).toHaveLength(3);
  });

  it('an error the node answered is not retried, and passes through unchanged unless named', async () => {
    const node = await scriptedNode((body) => ({
      text: JSON.stringify({ jsonrpc: '2.0', id: (body as Call).id, error: { code: -32602, message: 'invalid argument 0' } }),
    }));
    const plain = await createUpstream(node.url, { timeoutMs: 2000, retries: 2 })
      .call('eth_getBalance', ['nope'])
      .catch((error: unknown) => error);
    expect((plain as JsonRpcError).toJSON()).toEqual({ code: -32602, message: 'invalid argument 0' });
    expect(node.bodies).toHaveLength(1);
    const named = await createUpstream(node.url, { timeoutMs: 2000, namedErrors: true })
      .call('eth_getBalance', ['nope'])
      .catch((error: unknown) => error);
    expect((named as JsonRpcError).rpcCode).toBe(-32602);
    expect((named as JsonRpcError).message).toBe(`upstream RPC ${node.url} eth_getBalance: invalid argument 0`);
  });

  it('errors name the node by its origin only: no credentials, path or query (an API key)', async () => {
    const node = await scriptedNode(() => ({ status: 500, text: 'oops' }));
    const target = new URL(node.url);
    const secretUrl = `http://user:hunter2@${target.host}/v2/sk-secret-key?token=also-secret`;
    const failure = await createUpstream(secretUrl, { timeoutMs: 2000 })
      .call('eth_chainId', [])
      .catch((error: unknown) => error);
    expect((failure as Error).message).toBe(`upstream RPC ${node.url} answered eth_chainId with HTTP 500 without a JSON-RPC body`);
    expect(node.bodies).toHaveLength(1);
  });

  it('the public label hides the node altogether', async () => {
    const node = await scriptedNode(() => null);
    await expect(createUpstream(node.url, { timeoutMs: 100, label: publicUpstreamLabel }).call('eth_gasPrice', [])).rejects.toThrow(
      /^upstream RPC did not answer eth_gasPrice within 100 ms$/,
    );
  });
});
