import { createServer, type AddressInfo } from 'node:net';
import { Subscription } from 'rxjs';
import { WebSocketServer } from 'ws';
import { afterEach, describe, expect, it, vi } from 'vitest';
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

/** A loopback port nothing listens on: every connect to it is refused at once. */
async function refusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('webSocket$ reconnect timing (fake timers)', () => {
  it('reconnects exactly when the backoff ends, never sooner: min, doubling, then held at the cap', async () => {
    const url = `ws://127.0.0.1:${await refusedPort()}`;
    // Connects and refusals are real I/O; only the timers are fake. `settle` gives a refused
    // connect 50 ms of real time to come back; `refusals` waits (up to 5 s) for one that must.
    const realSetTimeout = globalThis.setTimeout;
    const settle = () => new Promise((resolve) => realSetTimeout(resolve, 50));
    const refusals = async (count: number) => {
      for (let waited = 0; retries.length < count && waited < 5000; waited += 10)
        await new Promise((resolve) => realSetTimeout(resolve, 10));
    };
    const retries: number[] = [];
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      subscriptions.push(
        webSocket$(url, { pingIntervalMs: 60_000, reconnectMinMs: 100, reconnectMaxMs: 300, maxPayloadBytes: 1 << 20 }).subscribe(
          (event) => {
            if (event.type === 'disconnected') retries.push(event.retryInMs);
          },
        ),
      );
      await refusals(1);
      expect(retries).toEqual([100]);
      for (const [waitMs, next] of [
        [100, 200],
        [200, 300],
        [300, 300],
        [300, 300],
      ] as const) {
        const before = retries.length;
        await vi.advanceTimersByTimeAsync(waitMs - 1);
        await settle();
        expect(retries).toHaveLength(before); // not one millisecond early
        await vi.advanceTimersByTimeAsync(1);
        await refusals(before + 1);
        expect(retries).toHaveLength(before + 1);
        expect(retries.at(-1)).toBe(next);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
