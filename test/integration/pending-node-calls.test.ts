import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, tempDir, testContext } from '../helpers/context.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, sender, signedTransfers } from '../helpers/view-records.ts';

/**
 * What the node carries for the gateway's pending reads: the gateway follows the node's head once
 * per process (src/rpc/node-head.ts), so a pending read answered from a view at or past that head
 * asks the node nothing. A stub node counts the calls it receives while clients read `pending` as
 * fast as they can over a window; the node's own polls (one `eth_blockNumber` every
 * `--head-poll-ms`) are all it may see, however many reads there were. At the head (a blocks
 * source's newest block) the node is asked nothing when it pushes its heads over a WebSocket
 * (`--rpc-ws`) and the push is fresh; with polling only, it is asked its head, by one call the
 * reads of a turn share.
 */
let dir: ReturnType<typeof tempDir>;
let log: Log;
let stub: RpcStub;
let serve: Serve | undefined;
let head = 9n;
const block10 = blockBuilder(10n);

const call = async (method: string, params: unknown[]) => {
  const response = await fetch(serve!.gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result?: any; error?: unknown }).result;
};

const pendingReads = [
  () => call('eth_getBlockByNumber', ['pending', false]),
  () => call('eth_getTransactionCount', [sender.address, 'pending']),
  () => call('eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]),
  () => call('eth_getBlockTransactionCountByNumber', ['pending']),
];

/** Every pending read of `pendingReads`, `rounds` times, 8 at a time; the node calls received meanwhile, by method. */
async function readWindow(rounds: number): Promise<{ reads: number; calls: Record<string, number>; answers: unknown[] }> {
  const before = stub.calls.length;
  const answers: unknown[] = [];
  for (let round = 0; round < rounds; round++)
    answers.push(...(await Promise.all([...pendingReads, ...pendingReads].map((read) => read()))));
  const calls: Record<string, number> = {};
  for (const { method } of stub.calls.slice(before)) calls[method] = (calls[method] ?? 0) + 1;
  return { reads: rounds * pendingReads.length * 2, calls, answers };
}

async function startServe(headPollMs: number) {
  await serve?.close();
  serve = await createServe(testContext({ port: 0, rpc: stub.url, rpcTimeoutMs: 2000, headPollMs }), { log, rpcUrl: stub.url });
  await eventually(
    async () => (await call('eth_getBlockByNumber', ['pending', false]))?.number === '0xa' || undefined,
    5000,
    'pending block 10',
  );
}

beforeAll(async () => {
  dir = tempDir();
  log = createEmbeddedLog({ path: `${dir.path}/flashlog.db` });
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const txs = await signedTransfers(3);
  stub = await createRpcStub({
    eth_blockNumber: () => `0x${head.toString(16)}`,
    eth_getBlockTransactionCountByNumber: () => '0x3',
    eth_getBlockByNumber: ([tag]) => ({
      number: tag === 'latest' ? `0x${head.toString(16)}` : tag,
      hash: `0x${'99'.repeat(32)}`,
      transactions: [],
    }),
  });
  await log.produce([
    ...block10.flashblock([txs[0]!], { stateDiff: { [sender.address.toLowerCase()]: { balance: '0x10', nonce: '0x1' } } }),
    ...block10.flashblock([txs[1]!, txs[2]!], { stateDiff: { [sender.address.toLowerCase()]: { balance: '0x20', nonce: '0x3' } } }),
  ]);
}, 30_000);

afterAll(async () => {
  await serve?.close();
  await stub?.close();
  await log?.close();
  dir?.remove();
});

describe('pending reads and the node', () => {
  it('the view past the node head: hundreds of pending reads, the node sees only the head polls', async () => {
    head = 9n;
    await startServe(200);
    const { reads, calls, answers } = await readWindow(40);
    expect(answers.filter((answer) => answer === undefined)).toEqual([]);
    expect(answers[0]).toMatchObject({ number: '0xa' });
    expect(answers[1]).toBe('0x3'); // the pending nonce, from the view
    expect(reads).toBe(320);
    // Only polls: at most one per 200 ms of the window, and never a count (the view is past the head).
    expect(calls.eth_getBlockTransactionCountByNumber ?? 0).toBe(0);
    expect(Object.keys(calls).filter((method) => method !== 'eth_blockNumber')).toEqual([]);
    expect(calls.eth_blockNumber ?? 0).toBeLessThan(reads / 20);
  });

  it('a head the gateway learns from a forwarded latest answer holds pending at once, before its next poll', async () => {
    head = 9n;
    await startServe(60_000); // one poll at start, then none within the test
    expect((await call('eth_getBlockByNumber', ['pending', false])).number).toBe('0xa');
    head = 12n; // the node moved two blocks past the view; the gateway has not polled since
    expect(await call('eth_blockNumber', [])).toBe('0xc');
    // pending is now never older than the latest this client read: the view is too far behind, so latest.
    expect((await call('eth_getBlockByNumber', ['pending', false])).number).toBe('0xc');
    expect(serve!.nodeHead.known()).toBe(12n);
  });
});

/** A blocks source's log holding block 10 complete (its header carries its hash), and a gateway over it that polls the node once a minute (and follows `newHeads` at `rpcWsUrl` when given). */
async function blocksGateway(
  rpcWsUrl?: string,
): Promise<{ serve: Serve; read: () => Promise<{ number: string; hash: string }>; close(): Promise<void> }> {
  const blocksDir = tempDir();
  const blocksLog = createEmbeddedLog({ path: `${blocksDir.path}/flashlog.db` });
  await blocksLog.ensureTopics(allTopics.map((name) => ({ name })));
  const [tx] = await signedTransfers(1);
  const records = blockBuilder(10n)
    .flashblock([tx!])
    .map((record) => {
      if (record.topic !== 'flashlog.blocks') return record;
      const value = JSON.parse(record.value) as { header: Record<string, unknown> };
      value.header.hash = `0x${'0a'.repeat(32)}`;
      return { ...record, value: JSON.stringify(value) };
    });
  await blocksLog.produce(records);
  const blocksServe = await createServe(testContext({ port: 0, rpc: stub.url, rpcTimeoutMs: 2000, headPollMs: 60_000 }), {
    log: blocksLog,
    rpcUrl: stub.url,
    source: 'blocks',
    rpcWsUrl,
  });
  const read = async () => {
    const response = await fetch(blocksServe.gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['pending', false] }),
    });
    return ((await response.json()) as { result: { number: string; hash: string } }).result;
  };
  await eventually(async () => ((await read()).hash === `0x${'0a'.repeat(32)}` ? true : undefined), 5000, 'block 10 served');
  return {
    serve: blocksServe,
    read,
    async close() {
      await blocksServe.close();
      await blocksLog.close();
      blocksDir.remove();
    },
  };
}

/**
 * The node's WebSocket JSON-RPC as far as `newHeads` goes: confirms the subscription and notifies
 * `head` every 100 ms (a node making blocks).
 */
async function newHeadsNode(): Promise<{ url: string; pause(paused: boolean): void; close(): Promise<void> }> {
  let paused = false;
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  server.on('connection', (socket) => {
    socket.on('message', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0xsub' })));
  });
  const notify = () => {
    if (paused) return;
    const message = JSON.stringify({
      jsonrpc: '2.0',
      method: 'eth_subscription',
      params: { subscription: '0xsub', result: { number: `0x${head.toString(16)}` } },
    });
    for (const socket of server.clients) socket.send(message);
  };
  const timer = setInterval(notify, 100);
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    pause: (value) => (paused = value),
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        for (const socket of server.clients) socket.terminate();
        server.close(() => resolve());
      }),
  };
}

describe('pending at the node head (blocks source)', () => {
  it('the view at the node head, heads pushed over the WebSocket: hundreds of pending reads, the node receives no call', async () => {
    head = 10n;
    const heads = await newHeadsNode();
    const gateway = await blocksGateway(heads.url);
    try {
      await eventually(async () => gateway.serve.nodeHead.pushed() || undefined, 5000, 'the node head pushed');
      const before = stub.calls.length;
      let reads = 0;
      const answers: string[] = [];
      for (let round = 0; round < 40; round++) {
        const batch = await Promise.all(Array.from({ length: 8 }, gateway.read));
        reads += batch.length;
        answers.push(...batch.map((block) => block.hash));
      }
      expect(reads).toBe(320);
      expect(new Set(answers)).toEqual(new Set([`0x${'0a'.repeat(32)}`]));
      expect(stub.calls.slice(before)).toEqual([]);
      // The node makes 11 and has not pushed it yet; a client reads latest and pending at once
      // through the gateway: pending waits for that latest read and asks the node, never older.
      heads.pause(true);
      head = 11n;
      const latestRead = fetch(gateway.serve.gateway.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['latest', false] }),
      }).then(async (response) => ((await response.json()) as { result: { number: string } }).result);
      const pendingRead = new Promise((resolve) => setTimeout(resolve, 2)).then(gateway.read);
      const [latest, pending] = await Promise.all([latestRead, pendingRead]);
      expect(latest.number).toBe('0xb');
      expect(pending.number).toBe('0xb');
      heads.pause(false);
      // The node pushes 11: the view does not reach it, so pending is latest (never older than the node's head).
      head = 11n;
      await eventually(async () => (gateway.serve.nodeHead.known() === 11n ? true : undefined), 5000, 'head 11 pushed');
      expect((await gateway.read()).number).toBe('0xb');
    } finally {
      await gateway.close();
      await heads.close();
    }
  });

  it('the view at the node head, polling only: the node is asked only its head, one eth_blockNumber shared by the reads of a turn', async () => {
    head = 10n;
    const gateway = await blocksGateway();
    try {
      const before = stub.calls.length;
      let reads = 0;
      const answers: string[] = [];
      for (let round = 0; round < 40; round++) {
        const batch = await Promise.all(Array.from({ length: 8 }, gateway.read));
        reads += batch.length;
        answers.push(...batch.map((block) => block.hash));
      }
      const calls = stub.calls.slice(before);
      // Every answer is the held block 10, from the view; the node is asked its head and nothing else.
      expect(new Set(answers)).toEqual(new Set([`0x${'0a'.repeat(32)}`]));
      expect([...new Set(calls.map((call) => call.method))]).toEqual(['eth_blockNumber']);
      // Not none (the blocks source's newest block is a node head: the node may have made the next),
      // but shared by the reads that arrive in one turn: well under one per read (about one per six here).
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.length).toBeLessThan(reads / 2);
    } finally {
      await gateway.close();
    }
  });

  it('a node that moved past the newest held block without the gateway hearing of it: pending reads see it at once, sharing their asks', async () => {
    head = 10n;
    const gateway = await blocksGateway();
    const read = gateway.read;
    try {
      // The node makes block 11; the gateway polls only once a minute and hears of nothing.
      head = 11n;
      const before = stub.calls.length;
      const answers = await Promise.all(Array.from({ length: 32 }, read));
      // Never the held block 10 under the node's 11: the view does not reach 11 here, so latest.
      expect(answers.map((block) => block.number)).toEqual(answers.map(() => '0xb'));
      const asked = stub.calls.slice(before).filter((call) => call.method === 'eth_blockNumber').length;
      expect(asked).toBeGreaterThanOrEqual(1);
      expect(asked).toBeLessThan(32);
    } finally {
      await gateway.close();
    }
  });
});
