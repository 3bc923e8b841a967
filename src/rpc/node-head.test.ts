import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import { createNodeHead, latestNamedBy, readsLatest, type NodeHead } from './node-head.ts';

/**
 * The node's head, followed once per process: newHeads over a real WebSocket (and the head asked
 * again on every reconnect, so a head notified while the socket was down is not missed), polling
 * without one, heads named by forwarded answers, and the sealed count asked once per height.
 */
const logger = createLogger({ level: 'silent' });
let closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.reverse()) await close();
  closing = [];
});

function countingNode(head: { value: bigint }) {
  const calls: string[] = [];
  return {
    calls,
    call: async (method: string) => {
      calls.push(method);
      if (method === 'eth_blockNumber') return `0x${head.value.toString(16)}`;
      if (method === 'eth_getBlockTransactionCountByNumber') return '0x5';
      throw new Error(`unexpected ${method}`);
    },
  };
}

const until = async (check: () => boolean, ms = 3000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

function follow(options: Partial<Parameters<typeof createNodeHead>[0]> & Pick<Parameters<typeof createNodeHead>[0], 'upstream'>): NodeHead {
  const head = createNodeHead({ pollMs: 0, logger, metrics: createMetricsRegistry({ defaults: false }), ...options });
  closing.push(() => head.close());
  return head;
}

describe('createNodeHead', () => {
  it('newHeads over the WebSocket raise the head; a reconnect asks the head missed while it was down', async () => {
    const head = { value: 5n };
    const node = countingNode(head);
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    closing.push(
      () =>
        new Promise((resolve) => {
          for (const client of server.clients) client.terminate();
          server.close(resolve);
        }),
    );
    const sockets: WebSocket[] = [];
    server.on('connection', (socket) => {
      sockets.push(socket);
      socket.on('message', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0xsub' })));
    });
    const notify = (n: bigint) =>
      sockets.at(-1)!.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'eth_subscription',
          params: { subscription: '0xsub', result: { number: `0x${n.toString(16)}` } },
        }),
      );
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const nodeHead = follow({
      upstream: node,
      wsUrl: url,
      pollMs: 60_000,
      ws: { pingIntervalMs: 10_000, reconnectMinMs: 20, reconnectMaxMs: 40 },
    });
    await until(() => nodeHead.known() === 5n && sockets.length === 1);
    head.value = 6n;
    notify(6n);
    await until(() => nodeHead.known() === 6n);
    const asked = node.calls.length;
    // The socket drops; the node moves to 9 meanwhile; the reconnect asks once.
    sockets[0]!.terminate();
    head.value = 9n;
    await until(() => nodeHead.known() === 9n && sockets.length === 2);
    expect(node.calls.length - asked).toBeGreaterThanOrEqual(1);
    notify(8n); // an older notification never lowers it
    notify(10n);
    await until(() => nodeHead.known() === 10n);
    expect(nodeHead.following).toBe(true);
  });

  it('polls without a WebSocket; a forwarded answer naming latest raises it; the sealed count is asked once per height', async () => {
    const head = { value: 3n };
    const node = countingNode(head);
    const nodeHead = follow({ upstream: node, pollMs: 20 });
    await until(() => nodeHead.known() === 3n);
    head.value = 4n;
    await until(() => nodeHead.known() === 4n);
    nodeHead.saw(7n);
    expect(nodeHead.known()).toBe(7n);
    nodeHead.saw(6n);
    expect(nodeHead.known()).toBe(7n);
    const counts = await Promise.all(Array.from({ length: 50 }, () => nodeHead.sealedTransactions(7n)));
    expect(counts.every((count) => count === 5n)).toBe(true);
    expect(node.calls.filter((method) => method === 'eth_getBlockTransactionCountByNumber')).toHaveLength(1);
  });

  it('follows nothing with polling off and no WebSocket: refresh asks, concurrent callers share one call', async () => {
    const node = countingNode({ value: 11n });
    const nodeHead = follow({ upstream: node });
    expect(nodeHead.following).toBe(false);
    expect(nodeHead.known()).toBeUndefined();
    expect(await Promise.all([nodeHead.refresh(), nodeHead.refresh(), nodeHead.refresh()])).toEqual([11n, 11n, 11n]);
    expect(node.calls).toEqual(['eth_blockNumber']);
  });

  it('readsLatest: eth_blockNumber and any call with the latest tag; not pending, not a number', () => {
    expect(readsLatest('eth_blockNumber', [])).toBe(true);
    expect(readsLatest('eth_getTransactionCount', ['0x01', 'latest'])).toBe(true);
    expect(readsLatest('eth_getTransactionCount', ['0x01', 'pending'])).toBe(false);
    expect(readsLatest('eth_getBlockByNumber', ['0x5', false])).toBe(false);
  });

  it('latestNamedBy: eth_blockNumber, and a block read of latest; nothing else', () => {
    expect(latestNamedBy('eth_blockNumber', [], '0x10')).toBe(16n);
    expect(latestNamedBy('eth_getBlockByNumber', ['latest', false], { number: '0x11' })).toBe(17n);
    expect(latestNamedBy('eth_getBlockByNumber', ['0x5', false], { number: '0x5' })).toBeUndefined();
    expect(latestNamedBy('eth_getBlockByNumber', ['latest', false], null)).toBeUndefined();
    expect(latestNamedBy('eth_chainId', [], '0x1')).toBeUndefined();
  });
});

describe('createNodeHead: the push taken as the head', () => {
  it('pushed: true only while the confirmed subscription pushed the known head within pushFreshMs', async () => {
    const head = { value: 5n };
    const node = countingNode(head);
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    closing.push(
      () =>
        new Promise((resolve) => {
          for (const client of server.clients) client.terminate();
          server.close(resolve);
        }),
    );
    const sockets: WebSocket[] = [];
    server.on('connection', (socket) => {
      sockets.push(socket);
      socket.on('message', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0xsub' })));
    });
    const notify = (n: bigint) =>
      sockets.at(-1)!.send(
        JSON.stringify({
          jsonrpc: '2.0',
          method: 'eth_subscription',
          params: { subscription: '0xsub', result: { number: `0x${n.toString(16)}` } },
        }),
      );
    const nodeHead = follow({
      upstream: node,
      wsUrl: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
      pollMs: 60_000,
      pushFreshMs: 400,
      ws: { pingIntervalMs: 10_000, reconnectMinMs: 20, reconnectMaxMs: 40 },
    });
    // Connected and asked (5), but nothing pushed yet: the known head is not the push.
    await until(() => nodeHead.known() === 5n && sockets.length === 1);
    expect(nodeHead.pushed()).toBe(false);
    notify(5n);
    await until(() => nodeHead.pushed());
    // A forwarded answer names a higher head than the push said: the push lags, not taken as the head.
    nodeHead.saw(6n);
    expect(nodeHead.pushed()).toBe(false);
    notify(6n);
    await until(() => nodeHead.pushed());
    // No push for longer than pushFreshMs: stale (a chain that stopped, or a subscription that went quiet).
    await until(() => !nodeHead.pushed(), 2000);
    notify(7n);
    await until(() => nodeHead.pushed());
    // The socket drops: not pushed until the new socket's subscription pushes again.
    sockets[0]!.terminate();
    await until(() => !nodeHead.pushed() && sockets.length === 2);
    notify(7n);
    await until(() => nodeHead.known() === 7n && nodeHead.pushed());
  });

  it('settle: one turn for the reads of a turn; with a latest read in flight, true once it is answered', async () => {
    const nodeHead = follow({ upstream: countingNode({ value: 1n }) });
    expect(await nodeHead.settle()).toBe(false);
    let answer!: () => void;
    const inFlight = new Promise<void>((resolve) => (answer = resolve));
    nodeHead.asking(inFlight);
    let settled = false;
    const first = nodeHead.settle().then((value) => ((settled = true), value));
    expect(nodeHead.settle()).toBe(nodeHead.settle()); // the reads of one turn share one wait
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    answer();
    expect(await first).toBe(true);
    // Answered, but clients read latest through the gateway within the last minute: still true.
    expect(await nodeHead.settle()).toBe(true);
    const idle = follow({ upstream: countingNode({ value: 1n }) });
    expect(await idle.settle()).toBe(false);
  });
});
