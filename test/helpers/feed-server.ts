import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, constants } from 'node:zlib';
import { WebSocketServer, type WebSocket } from 'ws';
import { sharedPath } from './shared.ts';

/** A real flashblocks WebSocket server for tests: plays a script to every client that connects. */
export type FeedStep =
  | { readonly send: string | Buffer; readonly binary?: boolean }
  | { readonly wait: number }
  /** Drop the connection abruptly (no close frame); the client must reconnect. */
  | { readonly drop: true };

export interface FeedServer {
  readonly url: string;
  readonly connections: number;
  /** Resolves when a client has been sent the whole script `count` times. */
  played(count?: number): Promise<void>;
  close(): Promise<void>;
}

export const fixturePath = (name: string) => sharedPath(`fixtures/flashblocks/${name}`);
export const loadFixture = (name: string): Record<string, unknown>[] => {
  const parsed = JSON.parse(readFileSync(fixturePath(name), 'utf8')) as unknown;
  return (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
};
/** Brotli as Base's websocket-proxy compresses: quality 5, window 22. */
export const brotli = (text: string): Buffer =>
  brotliCompressSync(Buffer.from(text), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_LGWIN]: 22 },
  });

/**
 * `scriptFor(n)` gives the steps for the n-th connection (0-based), so a test can drop the first
 * connection mid-block and continue on the next.
 */
export async function startFeedServer(scriptFor: (connection: number) => FeedStep[]): Promise<FeedServer> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  let connections = 0;
  let completed = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<WebSocket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const steps = scriptFor(connections++);
    void (async () => {
      for (const item of steps) {
        if (socket.readyState !== socket.OPEN) return;
        if ('wait' in item) await new Promise((resolve) => setTimeout(resolve, item.wait));
        else if ('drop' in item) {
          socket.terminate();
          return;
        } else socket.send(item.send, { binary: item.binary ?? typeof item.send !== 'string' });
      }
      completed++;
      for (const waiter of waiters.filter((candidate) => candidate.count <= completed)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    })();
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    played(count = 1) {
      if (completed >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
