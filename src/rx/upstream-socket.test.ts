import type { AddressInfo } from 'node:net';
import { Subscription } from 'rxjs';
import { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { webSocket$, type WebSocketEvent } from './upstream-socket.ts';

const servers: WebSocketServer[] = [];
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function server(onConnection: (socket: import('ws').WebSocket, n: number) => void) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: true });
  servers.push(wss);
  await new Promise((resolve) => wss.once('listening', resolve));
  let n = 0;
  wss.on('connection', (socket) => onConnection(socket, n++));
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
}
const until = (check: () => boolean, ms = 5000) =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const timer = setInterval(() => {
      if (check()) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started > ms) {
        clearInterval(timer);
        reject(new Error('timed out'));
      }
    }, 10);
  });

describe('webSocket$', () => {
  it('reconnects when no pong comes back before the next ping', async () => {
    // The server stops reading the socket after the handshake: pings are never answered.
    const url = await server((socket) => (socket as unknown as { _socket: { pause(): void } })._socket.pause());
    const events: WebSocketEvent[] = [];
    subscriptions.push(
      webSocket$(url, { pingIntervalMs: 100, reconnectMinMs: 20, reconnectMaxMs: 40, maxPayloadBytes: 1 << 20 }).subscribe((event) =>
        events.push(event),
      ),
    );
    await until(() => events.filter((event) => event.type === 'connected').length >= 2);
    const disconnect = events.find((event) => event.type === 'disconnected');
    expect(disconnect).toMatchObject({ reason: 'no pong within 100 ms' });
  });

  it('backs off doubling to the cap while the server refuses, and resets after a good connection', async () => {
    const events: (WebSocketEvent & { at: number })[] = [];
    // Each connection is closed at once without a message until the fourth, which delivers one.
    const url = await server((socket, n) => (n < 3 ? socket.close(1011, 'not yet') : socket.send('hello')));
    subscriptions.push(
      webSocket$(url, { pingIntervalMs: 1000, reconnectMinMs: 30, reconnectMaxMs: 100, maxPayloadBytes: 1 << 20 }).subscribe((event) =>
        events.push({ ...event, at: Date.now() }),
      ),
    );
    await until(() => events.some((event) => event.type === 'frame'));
    const delays = events.filter((event) => event.type === 'disconnected').map((event) => (event as { retryInMs: number }).retryInMs);
    expect(delays).toEqual([30, 60, 100]);
    const frame = events.find((event) => event.type === 'frame') as { data: Buffer };
    expect(frame.data.toString()).toBe('hello');
    // After a delivered message the next drop starts again at the minimum.
    for (const client of servers[0]!.clients) client.terminate();
    await until(() => events.filter((event) => event.type === 'disconnected').length >= 4);
    expect((events.filter((event) => event.type === 'disconnected').at(-1) as { retryInMs: number }).retryInMs).toBe(30);
  });
});
