import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import type { Log } from '../src/log/port.ts';
import { allTopics, topics } from '../src/records/topics.ts';
import { createIngest } from '../streams/ingest.ts';
import { createServe } from '../streams/serve.ts';
import { benchContext, runWorker } from './gateway.ts';

/**
 * The blocks source (Base after Denim) at 5 and at 50 blocks per second, side by side:
 * - node -> log: from the moment a node sends `newHeads` for a block to the moment that block's
 *   record is durable in the embedded log (p50, p99);
 * - node -> `logs` subscriber: to the moment each of 1,000 gateway WebSocket subscribers (in a
 *   worker thread; one `logs` subscription each, filtered to the ERC-20 token) parses the block's
 *   first token log (p50, p99).
 * The first 5 blocks of each run are warm-up and not measured.
 * The node is a replay server of blocks recorded from `devnet --denim` under load (real blocks,
 * receipts and hashes), sending them at the chosen rate, so the rate is not bounded by EDR.
 */
type Row = Record<string, unknown>;
type Json = Record<string, unknown>;
const require = createRequire(import.meta.url);
const SUBSCRIBERS = 1000;
const WARM_UP_BLOCKS = 5;

const subscriberWorker = `
const { parentPort, workerData } = require('node:worker_threads');
const WebSocket = require(workerData.wsPath);
const { url, count, address } = workerData;
const arrivals = []; const sockets = [];
let ready = 0;
for (let i = 0; i < count; i++) {
  const socket = new WebSocket(url); sockets.push(socket);
  const seen = new Set();
  socket.on('open', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['logs', { address }] })));
  socket.on('message', (data) => {
    const at = performance.timeOrigin + performance.now();
    const message = JSON.parse(data.toString());
    if (message.id === 1) { if (++ready === count) parentPort.postMessage({ ready: true }); return; }
    const log = message.params.result;
    if (log.removed || seen.has(log.blockHash)) return;
    seen.add(log.blockHash); arrivals.push([log.blockHash, at]);
  });
  socket.on('error', () => {});
}
parentPort.on('message', (emitted) => {
  const latencies = [];
  for (const [hash, at] of arrivals) if (emitted[hash] !== undefined) latencies.push(at - emitted[hash]);
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  parentPort.postMessage({ samples: latencies.length, p50: q(0.5), p99: q(0.99), max: q(1) });
  for (const socket of sockets) socket.terminate();
});`;

interface Recorded {
  blocks: Json[];
  receipts: Map<string, Json[]>;
  token: string;
}

async function call<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** `count` blocks of a Denim devnet under load (fast blocks, so recording is quick). */
async function record(count: number): Promise<Recorded> {
  const { createDevnet } = await import('../devnet/edr/devnet.ts');
  const devnet = await createDevnet({ denim: true, blockTimeMs: 60, load: 60 });
  try {
    while (BigInt(await call<string>(devnet.rpcUrl, 'eth_blockNumber', [])) < BigInt(count + 2))
      await new Promise((resolve) => setTimeout(resolve, 200));
    const blocks: Json[] = [];
    const receipts = new Map<string, Json[]>();
    for (let n = 1; n <= count; n++) {
      const block = await call<Json>(devnet.rpcUrl, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, true]);
      blocks.push(block);
      receipts.set(block.hash as string, await call<Json[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [block.hash]));
    }
    return { blocks, receipts, token: devnet.load!.token.toLowerCase() };
  } finally {
    await devnet.close();
  }
}

/** A node that replays `recorded` at `perSecond`: HTTP JSON-RPC and newHeads over WebSocket on one port. */
async function replayNode(recorded: Recorded): Promise<{
  url: string;
  wsUrl: string;
  start(perSecond: number): Promise<void>;
  emitted: Record<string, number>;
  close(): Promise<void>;
}> {
  let head = 0;
  const byHash = new Map(recorded.blocks.map((block) => [block.hash as string, block]));
  const emitted: Record<string, number> = {};
  const answer = (method: string, params: unknown[]): unknown => {
    const tagged = (tag: unknown) =>
      tag === 'latest'
        ? recorded.blocks[head]
        : tag === 'safe'
          ? recorded.blocks[Math.max(0, head - 10)]
          : tag === 'finalized'
            ? recorded.blocks[Math.max(0, head - 30)]
            : null;
    if (method === 'eth_getBlockByNumber') return tagged(params[0]) ?? null;
    if (method === 'eth_getBlockByHash') return byHash.get(String(params[0])) ?? null;
    if (method === 'eth_getBlockReceipts') return recorded.receipts.get(String(params[0])) ?? null;
    if (method === 'eth_blockNumber') return recorded.blocks[head]!.number;
    if (method === 'eth_chainId') return '0x539';
    return null;
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string; params: unknown[] };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: answer(body.method, body.params ?? []) }));
    });
  });
  const wss = new WebSocketServer({ server });
  const subscribers = new Set<WebSocket>();
  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as { id: number; method: string };
      if (message.method === 'eth_subscribe') {
        subscribers.add(socket);
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: '0x1' }));
      }
    });
    socket.on('close', () => subscribers.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    emitted,
    async start(perSecond) {
      const origin = performance.now();
      for (let i = 1; i < recorded.blocks.length; i++) {
        const delay = origin + (i * 1000) / perSecond - performance.now();
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
        head = i;
        const { transactions: _transactions, ...header } = recorded.blocks[i]!;
        // The first blocks are warm-up (first writes, JIT): not measured.
        if (i > WARM_UP_BLOCKS) emitted[header.hash as string] = performance.timeOrigin + performance.now();
        const text = JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: '0x1', result: header } });
        for (const socket of subscribers) socket.send(text);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of subscribers) socket.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const quantile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const recorded = await record(160);
  const txs = recorded.blocks.reduce((sum, block) => sum + (block.transactions as unknown[]).length, 0);
  for (const perSecond of [5, 50]) {
    // 5 blocks/s: 80 blocks (16 s); 50 blocks/s: all 160 (3.2 s).
    const blocks = perSecond === 5 ? { ...recorded, blocks: recorded.blocks.slice(0, 81) } : recorded;
    const node = await replayNode(blocks);
    const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-blocks-'));
    const ctx = benchContext(dir, { source: 'blocks', lifecyclePollMs: 0, blocksPollMs: 200 });
    const inner = createEmbeddedLog({ path: `${dir}/flashlog.db` });
    await inner.ensureTopics(allTopics.map((name) => ({ name })));
    const appended: Record<string, number> = {};
    const log: Log = {
      ...inner,
      kind: inner.kind,
      async produce(records) {
        const positions = await inner.produce(records);
        const at = performance.timeOrigin + performance.now();
        for (const record of records) {
          if (record.topic !== topics.blocks) continue;
          const hash = /"hash":"(0x[0-9a-f]{64})"/.exec(record.value)?.[1];
          if (hash) appended[hash] ??= at;
        }
        return positions;
      },
    };
    try {
      const serve = await createServe(ctx, { log, rpcUrl: node.url, source: 'blocks' });
      const result = await runWorker<{ samples: number; p50: number; p99: number; max: number }>(
        subscriberWorker,
        { url: serve.gateway.wsUrl, count: SUBSCRIBERS, address: recorded.token, wsPath: require.resolve('ws') },
        (worker) => {
          void (async () => {
            const ingest = createIngest(ctx, { log, endpoints: { source: 'blocks', rpcUrl: node.url, rpcWsUrl: node.wsUrl } });
            const done = ingest.run();
            await new Promise((resolve) => setTimeout(resolve, 300));
            await node.start(perSecond);
            const last = blocks.blocks.at(-1)!.hash as string;
            const deadline = Date.now() + 30_000;
            while (appended[last] === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
            await new Promise((resolve) => setTimeout(resolve, 1000));
            await ctx.shutdown.run();
            await done.catch(() => {});
            worker.postMessage(node.emitted);
          })();
        },
      );
      const toLog = Object.entries(node.emitted).flatMap(([hash, at]) => (appended[hash] === undefined ? [] : [appended[hash]! - at]));
      rows.push({
        bench: 'blocks source',
        'blocks/s': perSecond,
        blocks: Object.keys(node.emitted).length,
        'txs/block': Number((txs / recorded.blocks.length).toFixed(1)),
        appended: toLog.length,
        'node->log p50 ms': quantile(toLog, 0.5),
        'node->log p99 ms': quantile(toLog, 0.99),
        subscribers: SUBSCRIBERS,
        'notifications (first log/block)': result.samples,
        'node->logs sub p50 ms': result.p50,
        'node->logs sub p99 ms': result.p99,
      });
      await serve.close();
    } finally {
      await node.close();
      await inner.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const [slow, fast] = rows;
  if (slow && fast)
    rows.push({
      bench: 'ratio 50/s over 5/s',
      'node->log p99 ms': (fast['node->log p99 ms'] as number) / Math.max(0.001, slow['node->log p99 ms'] as number),
      'node->logs sub p99 ms': (fast['node->logs sub p99 ms'] as number) / Math.max(0.001, slow['node->logs sub p99 ms'] as number),
    });
  return rows;
}
