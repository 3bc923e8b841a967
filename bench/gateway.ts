import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { numberToHex, type Hex } from 'viem';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import type { Log } from '../src/log/port.ts';
import { allTopics } from '../src/records/topics.ts';
import { createMetricsRegistry } from '../src/obs/metrics.ts';
import { createLogger } from '../src/obs/logger.ts';
import { parseConfig } from '../src/config/settings.ts';
import { createShutdown, type Context } from '../src/context.ts';
import { createServe } from '../streams/serve.ts';
import { materialize } from '../streams/materialize.ts';
import { blockBuilder, signedTransfers } from '../test/helpers/view-records.ts';
import { createRpcStub } from '../test/helpers/rpc-stub.ts';
import { besideGeth } from './gateway-geth.ts';

/**
 * The gateway, side by side in one run:
 * 1. pending eth_getLogs (filtered by one address) and eth_getBlockByNumber(pending) served by the
 *    gateway vs the same calls answered by the devnet node (req/s, p50/p99), the load generated
 *    from a worker thread with 32 keep-alive connections; the gateway is single-threaded (one core).
 * 2. pendingLogs delivery latency with 1, 100 and 1,000 subscribers (one WebSocket each, in a
 *    worker): from the block record's append call to the notification parsed by the client.
 *    (The executor is not in this path; ingest adds decode+sequence+execute before the append.)
 * 3. view replay rate (records/s) of a log of 300 blocks x 10 flashblocks.
 * 4. beside geth (bench/gateway-geth.ts): `flashlog run --source blocks` over geth `--dev`, pending
 *    reads of flashlog against geth's `latest`, side by side; skipped with one line without geth.
 * Targets: >= 10,000 req/s pending getLogs; p99 <= 20 ms at 1,000 subscribers (embedded log);
 * beside geth: pending block >= 1.2x, pending logs >= 1.2x (the same logs), eth_call >= 0.4x.
 */
type Row = Record<string, unknown>;
const require = createRequire(import.meta.url);

export const loadWorker = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, body, concurrency, durationMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const target = new URL(url);
const latencies = []; let done = 0, errors = 0;
const end = Date.now() + durationMs;
const one = () => Date.now() >= end ? Promise.resolve() : new Promise((resolve) => {
  const t0 = performance.now();
  const req = http.request({ host: target.hostname, port: target.port, path: '/', method: 'POST', agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    const chunks = []; res.on('data', (c) => chunks.push(c));
    res.on('end', () => { latencies.push(performance.now() - t0); const text = Buffer.concat(chunks).toString();
      if (res.statusCode !== 200 || text.startsWith('{"jsonrpc":"2.0","id":1,"error"')) errors++; done++; resolve(); });
  });
  req.on('error', () => { errors++; resolve(); });
  req.end(body);
}).then(one);
const started = performance.now();
Promise.all(Array.from({ length: concurrency }, one)).then(() => {
  const seconds = (performance.now() - started) / 1000; latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0;
  parentPort.postMessage({ done, errors, perSecond: done / seconds, p50: at(0.5), p99: at(0.99) }); agent.destroy();
});`;

const subscriberWorker = `
const { parentPort, workerData } = require('node:worker_threads');
const WebSocket = require(workerData.wsPath);
const { url, count } = workerData;
const latencies = []; const sockets = [];
let ready = 0;
for (let i = 0; i < count; i++) {
  const socket = new WebSocket(url); sockets.push(socket);
  socket.on('open', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['pendingLogs'] })));
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.id === 1) { if (++ready === count) parentPort.postMessage({ ready: true }); return; }
    const sentUs = Number(BigInt(message.params.result.data));
    latencies.push((performance.timeOrigin + performance.now()) * 1000 - sentUs);
  });
  socket.on('error', () => {});
}
parentPort.on('message', () => {
  latencies.sort((a, b) => a - b);
  const at = (q) => (latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0) / 1000;
  parentPort.postMessage({ samples: latencies.length, p50: at(0.5), p99: at(0.99), max: at(1) });
  for (const socket of sockets) socket.terminate();
});`;

export function runWorker<T>(code: string, workerData: unknown, onReady?: (worker: Worker) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData });
    worker.on('message', (message: T & { ready?: boolean }) => {
      if (message.ready) onReady?.(worker);
      else {
        resolve(message);
        void worker.terminate();
      }
    });
    worker.on('error', reject);
  });
}

export function benchContext(dir: string, overrides: Record<string, unknown> = {}): Context {
  const { config } = parseConfig([], {}, []);
  const logger = createLogger({ level: 'warn', name: 'bench', destination: process.stderr as never });
  return {
    config: { ...config, dataDir: dir, port: 0, headPollMs: 0, maxConnections: 5000, ...overrides },
    logger,
    metrics: createMetricsRegistry({ defaults: false }),
    shutdown: createShutdown(logger),
  };
}

const emitters = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Hex);
const nowUs = (): Hex => numberToHex(BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)), { size: 32 });

async function startDevnet(): Promise<{ rpcUrl: string; close(): Promise<void> } | { error: string }> {
  try {
    const module = await import('../devnet/edr/devnet.ts');
    return await module.createDevnet({ rpcPort: 0, wsPort: 0 });
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-gateway-'));
  // The gateway answers these from the view: its upstream is a stub, and the devnet (whose block
  // producer would share this process's CPU) only runs while its own rows are measured.
  const stub = await createRpcStub({ eth_blockNumber: () => '0x1' });
  const upstreamUrl = stub.url;
  const devnetRows: [string, string][] = [];
  let log: Log | undefined;
  try {
    log = createEmbeddedLog({ path: join(dir, 'flashlog.db') });
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    // A realistic pending block: 10 flashblocks of 20 transactions, 2 logs each, 50 emitters.
    const pool = await signedTransfers(200);
    const number = 1_000_000n;
    const block = blockBuilder(number);
    for (let fb = 0; fb < 10; fb++) await log.produce(block.flashblock(pool.slice(fb * 20, fb * 20 + 20), { logsPerTx: 2, emitters }));
    // The gateway follows the stub's head (block 1, far below the pending block): pending reads ask it nothing.
    const ctx = benchContext(dir, { headPollMs: 100 });
    const serve = await createServe(ctx, { log, rpcUrl: upstreamUrl });
    try {
      const cases: [string, unknown][] = [
        [
          'eth_getLogs pending, one address',
          { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: 'pending', toBlock: 'pending', address: emitters[7] }] },
        ],
        ['eth_getBlockByNumber(pending, false)', { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['pending', false] }],
      ];
      // The ceiling of this machine: a bare node:http server answering a fixed JSON-RPC result.
      const bare = createServer((request, response) => {
        request.resume();
        request.on('end', () =>
          response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x1"}'),
        );
      });
      await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
      const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
      for (const [name, request] of cases) {
        const body = JSON.stringify(request);
        const targets: [string, string][] = [['gateway', serve.gateway.url]];
        if (name === cases[0]![0]) targets.push(['bare node:http (machine ceiling)', bareUrl]);
        devnetRows.push([name, body]);
        const measured: Row[] = [];
        for (const [server, url] of targets) {
          const result = await runWorker<{ done: number; errors: number; perSecond: number; p50: number; p99: number }>(loadWorker, {
            url,
            body,
            concurrency: 32,
            durationMs: 4000,
          });
          measured.push({
            bench: name,
            server,
            requests: result.done,
            errors: result.errors,
            'req/s': Math.round(result.perSecond),
            'p50 ms': result.p50,
            'p99 ms': result.p99,
          });
        }
        rows.push(...measured);
      }
      bare.closeAllConnections();
      bare.close();
      // Delivery latency: append -> pendingLogs notification, 1 / 100 / 1,000 subscribers.
      const wsPath = require.resolve('ws');
      for (const count of [1, 100, 1000]) {
        const live = blockBuilder(number + 1n + BigInt(count));
        const result = await runWorker<{ samples: number; p50: number; p99: number; max: number }>(
          subscriberWorker,
          { url: serve.gateway.wsUrl, count, wsPath },
          (worker) => {
            void (async () => {
              for (let i = 0; i < 40; i++) {
                await log!.produce(live.flashblock([pool[i]!], { logsPerTx: 1, data: nowUs }));
                await new Promise((resolve) => setTimeout(resolve, 100));
              }
              await new Promise((resolve) => setTimeout(resolve, 500));
              worker.postMessage('report');
            })();
          },
        );
        rows.push({
          bench: 'pendingLogs delivery (append -> client)',
          server: 'gateway',
          subscribers: count,
          notifications: result.samples,
          'p50 ms': result.p50,
          'p99 ms': result.p99,
          'max ms': result.max,
          'x target (p99 20 ms)': result.p99 / 20,
        });
      }
    } finally {
      await serve.close();
    }
    // The same calls answered by the devnet node.
    const devnet = await startDevnet();
    try {
      for (const [name, body] of devnetRows) {
        if (!('rpcUrl' in devnet)) {
          rows.push({ bench: name, server: 'devnet node', error: `devnet unavailable: ${devnet.error}` });
          continue;
        }
        const result = await runWorker<{ done: number; errors: number; perSecond: number; p50: number; p99: number }>(loadWorker, {
          url: devnet.rpcUrl,
          body,
          concurrency: 32,
          durationMs: 4000,
        });
        rows.push({
          bench: name,
          server: 'devnet node',
          requests: result.done,
          errors: result.errors,
          'req/s': Math.round(result.perSecond),
          'p50 ms': result.p50,
          'p99 ms': result.p99,
        });
      }
    } finally {
      if ('close' in devnet) await devnet.close();
    }
    for (const row of rows) {
      const gateway = rows.find((candidate) => candidate.bench === row.bench && candidate.server === 'gateway');
      if (typeof row['req/s'] !== 'number' || !gateway) continue;
      row['vs gateway'] = row['req/s'] / (gateway['req/s'] as number);
      if (String(row.bench).startsWith('eth_getLogs')) row['x target (10,000 req/s)'] = row['req/s'] / 10_000;
    }
    // Replay: 300 blocks x 10 flashblocks x 10 txs, 1 log each.
    const replayDir = mkdtempSync(join(tmpdir(), 'flashlog-bench-replay-'));
    const replayLog = createEmbeddedLog({ path: join(replayDir, 'flashlog.db') });
    try {
      await replayLog.ensureTopics(allTopics.map((name) => ({ name })));
      let records = 0;
      for (let b = 0; b < 300; b++) {
        const replayBlock = blockBuilder(2_000_000n + BigInt(b));
        const batch = [];
        for (let fb = 0; fb < 10; fb++) batch.push(...replayBlock.flashblock(pool.slice(fb * 10, fb * 10 + 10), { emitters }));
        records += batch.length;
        await replayLog.produce(batch);
      }
      const replayCtx = benchContext(replayDir);
      const view = await materialize(replayCtx, { log: replayLog });
      const replayed = await view.replayed;
      await view.close();
      rows.push({
        bench: 'view replay (embedded log)',
        server: 'materialize',
        records,
        'records/s': replayed.perSecond,
        'replay ms': replayed.ms,
      });
    } finally {
      await replayLog.close();
      rmSync(replayDir, { recursive: true, force: true });
    }
  } finally {
    await log?.close();
    await stub.close();
    rmSync(dir, { recursive: true, force: true });
  }
  rows.push(...(await besideGeth((options) => runWorker(loadWorker, options))));
  return rows;
}
