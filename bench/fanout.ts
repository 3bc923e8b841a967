import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberToHex, type Hex } from 'viem';
import { WebSocketServer } from 'ws';
import { createEmbeddedLog } from '../src/log/embedded.ts';
import { allTopics } from '../src/log/topics.ts';
import { createServe } from '../streams/serve.ts';
import { createRpcStub } from '../test/helpers/rpc-stub.ts';
import { blockBuilder, signedTransfers, type BlockBuilder } from '../test/helpers/view-records.ts';
import { benchContext } from './gateway.ts';
import { buildWebsocketProxy } from './peers/websocket-proxy.ts';

/**
 * Fan-out, fair (issue 17): the subscribers run in client processes apart from the server (each
 * holding up to 1,000 WebSocket connections), at 1, 100, 1,000 and 10,000 subscribers, with
 * flashblocks appended at 5 and 50 per second (3 s and 2 s). Latency is from the append call (a
 * CLOCK_MONOTONIC µs stamp written into the log's data) to the message parsed in the client.
 * - flashlog: the gateway (view + pendingLogs writer) in this process; each client sends
 *   eth_subscribe("pendingLogs") with no filter, so every subscriber gets every log; the gateway
 *   still runs each subscriber's filter check and writes one JSON-RPC notification per log.
 * - Base's websocket-proxy (Rust, built from base/base by bench/peers/websocket-proxy.ts): its
 *   upstream is a WebSocket server in this process sending the same block record as one text frame
 *   per flashblock; the proxy forwards every frame, unfiltered and unparsed, to every client.
 * Both wait for the same client processes; the bench is the log writer / upstream for both.
 * Target: flashlog p99 <= 20 ms at 1,000 subscribers.
 */
type Row = Record<string, unknown>;
const counts = (process.env.FLASHLOG_BENCH_FANOUT_COUNTS ?? '1,100,1000,10000').split(',').map(Number);
const phases = [
  { perSecond: 5, seconds: 3 },
  { perSecond: 50, seconds: 2 },
];
const perProcess = Number(process.env.FLASHLOG_BENCH_FANOUT_PER_PROCESS ?? 1000);
const clientScript = fileURLToPath(new URL('./peers/fanout-client.ts', import.meta.url));
const nowUs = (): Hex => numberToHex(process.hrtime.bigint() / 1000n, { size: 32 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Clients {
  report(): Promise<Float64Array>;
  close(): void;
  failed: number;
}

async function startClients(url: string, count: number, mode: 'flashlog' | 'proxy'): Promise<Clients> {
  const children: ChildProcess[] = [];
  let failed = 0;
  const ready: Promise<void>[] = [];
  for (let left = count; left > 0; left -= perProcess) {
    const child = fork(clientScript, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    ready.push(
      new Promise<void>((resolve, reject) => {
        child.once('message', (message: { failed: number }) => {
          failed += message.failed;
          resolve();
        });
        child.once('exit', (code) => reject(new Error(`client process exited (${code})`)));
      }),
    );
    child.send({ start: { url, count: Math.min(perProcess, left), mode } });
  }
  await Promise.all(ready);
  return {
    get failed() {
      return failed;
    },
    async report() {
      const parts = await Promise.all(
        children.map(
          (child) =>
            new Promise<Float64Array>((resolve) => {
              child.once('message', (message: { latencies: Float64Array }) => resolve(message.latencies));
              child.send({ report: true });
            }),
        ),
      );
      const all = new Float64Array(parts.reduce((sum, part) => sum + part.length, 0));
      let at = 0;
      for (const part of parts) {
        all.set(part, at);
        at += part.length;
      }
      return all.sort();
    },
    close() {
      for (const child of children) child.kill();
    },
  };
}

const stats = (sorted: Float64Array, expected: number) => {
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN) / 1000;
  return {
    received: sorted.length,
    expected,
    'p50 ms': at(0.5),
    'p99 ms': at(0.99),
    'max ms': sorted.length ? sorted[sorted.length - 1]! / 1000 : Number.NaN,
  };
};

/** Appends flashblocks (one transfer, one log carrying the stamp) at `perSecond` for `seconds`. */
async function drive(
  emit: (block: BlockBuilder, tx: { hash: Hex; raw: Hex }) => Promise<void>,
  perSecond: number,
  seconds: number,
  pool: { hash: Hex; raw: Hex }[],
  nextBlock: () => bigint,
): Promise<number> {
  const total = perSecond * seconds;
  const started = performance.now();
  let block = blockBuilder(nextBlock());
  for (let i = 0; i < total; i++) {
    if (i % 10 === 0 && i > 0) block = blockBuilder(nextBlock());
    await emit(block, pool[i % 10]!);
    const wait = started + ((i + 1) * 1000) / perSecond - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await sleep(500);
  return total;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const limit = Number(spawnSync('sh', ['-c', 'ulimit -n']).stdout.toString().trim());
  const usable = counts.filter((count) => {
    if (Number.isFinite(limit) && count + 200 > limit) {
      rows.push({
        bench: 'fan-out',
        subscribers: count,
        skipped: `ulimit -n is ${limit}: a server holding ${count} connections needs more file descriptors`,
      });
      return false;
    }
    return true;
  });
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-fanout-'));
  const pool = await signedTransfers(10);
  let number = 50_000_000n;
  const nextBlock = () => number++;
  const stub = await createRpcStub({ eth_blockNumber: () => '0x1' });
  const log = createEmbeddedLog({ path: join(dir, 'flashlog.db') });
  try {
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    // flashlog's gateway
    const serve = await createServe(benchContext(dir, { maxConnections: 20_000 }), { log, rpcUrl: stub.url });
    try {
      for (const count of usable) {
        const clients = await startClients(serve.gateway.wsUrl, count, 'flashlog');
        try {
          for (const { perSecond, seconds } of phases) {
            const appended = await drive(
              async (block, tx) => {
                await log.produce(block.flashblock([tx], { logsPerTx: 1, data: nowUs }));
              },
              perSecond,
              seconds,
              pool,
              nextBlock,
            );
            rows.push({
              bench: 'fan-out (append -> client)',
              server: 'flashlog pendingLogs',
              subscribers: count,
              'flashblocks/s': perSecond,
              'failed connections': clients.failed,
              ...stats(await clients.report(), appended * (count - clients.failed)),
            });
          }
        } finally {
          clients.close();
        }
      }
    } finally {
      await serve.close();
    }
    // Base's websocket-proxy, fed the same block records as upstream frames
    const built = buildWebsocketProxy((line) => process.stderr.write(`${line}\n`));
    if ('skipped' in built) {
      rows.push({ bench: 'fan-out (append -> client)', server: 'websocket-proxy', skipped: built.skipped });
    } else {
      const upstream = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      await new Promise((resolve) => upstream.once('listening', resolve));
      const connected = new Promise((resolve) => upstream.once('connection', resolve));
      const port = await freePort();
      const proxy = spawn(
        built.binary,
        [
          '--listen-addr',
          `127.0.0.1:${port}`,
          '--upstream-ws',
          `ws://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
          '--instance-connection-limit',
          '20000',
          '--per-ip-connection-limit',
          '20000',
          '--metrics-addr',
          `127.0.0.1:${await freePort()}`,
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, RUST_LOG: 'error' } },
      );
      try {
        const exited = new Promise((_, reject) => proxy.once('exit', (code) => reject(new Error(`websocket-proxy exited (${code})`))));
        exited.catch(() => {});
        await Promise.race([
          connected,
          exited,
          sleep(10_000).then(() => {
            throw new Error('websocket-proxy did not connect to its upstream in 10 s');
          }),
        ]);
        for (const count of usable) {
          const clients = await startClients(`ws://127.0.0.1:${port}/ws`, count, 'proxy');
          try {
            for (const { perSecond, seconds } of phases) {
              const appended = await drive(
                async (block, tx) => {
                  const [record] = block.flashblock([tx], { logsPerTx: 1, data: nowUs });
                  for (const socket of upstream.clients) socket.send(record!.value);
                },
                perSecond,
                seconds,
                pool,
                nextBlock,
              );
              rows.push({
                bench: 'fan-out (append -> client)',
                server: `websocket-proxy (base/base ${built.commit.slice(0, 10)})`,
                subscribers: count,
                'flashblocks/s': perSecond,
                'failed connections': clients.failed,
                ...stats(await clients.report(), appended * (count - clients.failed)),
              });
            }
          } finally {
            clients.close();
          }
        }
      } finally {
        proxy.kill();
        for (const socket of upstream.clients) socket.terminate();
        upstream.close();
      }
    }
  } finally {
    await log.close();
    await stub.close();
    rmSync(dir, { recursive: true, force: true });
  }
  for (const row of rows) {
    if (typeof row['p99 ms'] !== 'number' || !String(row.server).startsWith('flashlog')) continue;
    const peer = rows.find(
      (other) =>
        String(other.server).startsWith('websocket-proxy') &&
        other.subscribers === row.subscribers &&
        other['flashblocks/s'] === row['flashblocks/s'],
    );
    if (peer && typeof peer['p99 ms'] === 'number') row['p99 x websocket-proxy'] = row['p99 ms'] / peer['p99 ms'];
    if (row.subscribers === 1000) row['p99 x target (20 ms)'] = row['p99 ms'] / 20;
  }
  return rows;
}
