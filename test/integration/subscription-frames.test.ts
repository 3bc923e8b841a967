import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, tempDir, testContext } from '../helpers/context.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, emitter, signedTransfers } from '../helpers/view-records.ts';

/**
 * pendingLogs notifications are written as ready-made WebSocket frames (one write per subscriber
 * per flashblock): a real `ws` client must read every frame size class (7-bit, 16-bit and 64-bit
 * lengths), in order, interleaved with the answers `ws` itself frames on the same connection.
 */
let dir: ReturnType<typeof tempDir>;
let log: Log;
let stub: RpcStub;
let serve: Serve;
const ctx = testContext({ port: 0, headPollMs: 0 });

beforeAll(async () => {
  dir = tempDir();
  log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  stub = await createRpcStub({ eth_blockNumber: () => '0x1', eth_chainId: () => '0x385' });
  serve = await createServe(ctx, { log, rpcUrl: stub.url });
});

afterAll(async () => {
  await serve?.close();
  await ctx.shutdown.run();
  await stub?.close();
  await log?.close();
  dir?.remove();
});

describe('pendingLogs frames', () => {
  it('a ws client reads every notification of every size, in block order, with RPC answers in between', async () => {
    const socket = new WebSocket(serve.gateway.wsUrl);
    const messages: { id?: number; result?: unknown; params?: { subscription: string; result: { logIndex: string; data: string } } }[] = [];
    socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString())));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['pendingLogs'] }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['pendingLogs', { address: emitter }] }));
    await eventually(() => (messages.filter((m) => m.id).length === 2 ? true : undefined), 3000, 'subscriptions');

    // Log data of 0, 40 and 35,000 bytes: notifications under 126 bytes never happen (the
    // envelope alone is longer), so 16-bit and 64-bit lengths are the two cases with these.
    const sizes = [0, 40, 35_000, 3, 70_000];
    let n = 0;
    const block = blockBuilder(2n);
    const txs = await signedTransfers(10);
    for (let fb = 0; fb < 2; fb++) {
      await log.produce(
        block.flashblock(txs.slice(fb * 5, fb * 5 + 5), { logsPerTx: 2, data: () => `0x${'ab'.repeat(sizes[n++ % sizes.length]!)}` }),
      );
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 10 + fb, method: 'eth_chainId', params: [] }));
    }
    await eventually(
      () => (messages.filter((m) => m.params).length >= 40 && messages.some((m) => m.id === 11) ? true : undefined),
      5000,
      'notifications',
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}: ${messages.length} messages: ${JSON.stringify(messages.map((m) => m.id ?? m.params?.result.logIndex)).slice(0, 300)}`,
      );
    });
    socket.close();

    const subscriptions = messages.filter((m) => m.id === 1 || m.id === 2).map((m) => m.result as string);
    const expected = block.logs();
    for (const subscription of subscriptions) {
      const got = messages.filter((m) => m.params?.subscription === subscription).map((m) => m.params!.result);
      expect(got.map((l) => l.logIndex)).toEqual(expected.map((l) => l.logIndex));
      expect(got.map((l) => l.data)).toEqual(expected.map((l) => l.data));
    }
    expect(new Set(expected.map((l) => l.data.length)).size).toBeGreaterThanOrEqual(4);
    expect(messages.find((m) => m.id === 10)).toMatchObject({ result: '0x385' });
  });

  it('with more subscribers than one write slice, flashblocks arriving mid-fan-out reach every subscriber once, in order', async () => {
    const count = 250;
    const received: string[][] = Array.from({ length: count }, () => []);
    const sockets = await Promise.all(
      received.map(async (got) => {
        const socket = new WebSocket(serve.gateway.wsUrl);
        socket.on('message', (data: Buffer) => {
          const message = JSON.parse(data.toString()) as { params?: { result: { blockNumber: string; logIndex: string } } };
          if (message.params) got.push(`${message.params.result.blockNumber}/${message.params.result.logIndex}`);
        });
        await new Promise<void>((resolve, reject) => {
          socket.once('open', () => resolve());
          socket.once('error', reject);
        });
        const confirmed = new Promise<void>((resolve) => socket.once('message', () => resolve()));
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['pendingLogs'] }));
        await confirmed;
        return socket;
      }),
    );
    const block = blockBuilder(3n);
    const txs = (await signedTransfers(30, 10)).slice(0, 20);
    // four flashblocks appended back to back: later ones arrive while earlier ones are being written
    for (let fb = 0; fb < 4; fb++) await log.produce(block.flashblock(txs.slice(fb * 5, fb * 5 + 5), { logsPerTx: 2 }));
    const expected = block.logs().map((l) => `${l.blockNumber}/${l.logIndex}`);
    expect(expected).toHaveLength(40);
    await eventually(
      () => (received.every((got) => got.length >= expected.length) ? true : undefined),
      10_000,
      'every subscriber has every log',
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: counts ${[...new Set(received.map((got) => got.length))]}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 200)); // nothing more may come
    for (const got of received) expect(got).toEqual(expected);
    for (const socket of sockets) socket.close();
  }, 30_000);
});
