import { NEVER } from 'rxjs';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createGateway, type Gateway } from '../../src/rpc/server.ts';
import { createUpstream } from '../../src/jsonrpc/upstream.ts';
import { initialViewState } from '../../src/view/state.ts';

/**
 * The WebSocket heartbeat on a real gateway and real `ws` clients: a client that answers pings
 * (any `ws` client does) stays; one that stopped reading its socket is closed after a missed ping.
 */
let gateway: Gateway;
const metrics = new Registry();

beforeAll(async () => {
  gateway = await createGateway({
    host: '127.0.0.1',
    port: 0,
    view: initialViewState,
    states$: NEVER,
    upstream: createUpstream('http://127.0.0.1:9', { timeoutMs: 100 }),
    logger: pino({ level: 'silent' }),
    metrics,
    public: false,
    rateLimit: 1000,
    maxBodyBytes: 1 << 20,
    maxBatch: 10,
    maxConnections: 10,
    maxSubscriptions: 10,
    maxBufferedBytes: 1 << 20,
    maxLogsRange: 2000,
    heartbeatMs: 200,
  });
});
afterAll(() => gateway?.close());

const open = async () => {
  const socket = new WebSocket(gateway.wsUrl);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return socket;
};

describe('WebSocket heartbeat', () => {
  it('keeps a client that answers pings and closes one that stopped reading', async () => {
    const live = await open();
    const stalled = await open();
    let liveClosed = false;
    live.on('close', () => {
      liveClosed = true;
    });
    (stalled as unknown as { _socket: { pause(): void } })._socket.pause();
    const metric = async (name: string) => Number((await metrics.metrics()).match(new RegExp(`^${name} (\\d+)`, 'm'))?.[1] ?? Number.NaN);
    const started = Date.now();
    while ((await metric('flashlog_ws_heartbeat_disconnects_total')) < 1 && Date.now() - started < 3000)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Date.now() - started, 'the stalled client is closed within about two heartbeats').toBeLessThan(2000);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await metric('flashlog_ws_heartbeat_disconnects_total'), 'only the stalled client').toBe(1);
    expect(await metric('flashlog_ws_connections'), 'the live client is still connected').toBe(1);
    expect(liveClosed).toBe(false);
    expect(live.readyState).toBe(WebSocket.OPEN);
    stalled.terminate();
    live.close();
  });
});
