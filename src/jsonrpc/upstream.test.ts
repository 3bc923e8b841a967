import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { exchange } from './upstream.ts';

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
