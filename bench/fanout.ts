import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberToHex, type Hex } from 'viem';
import { WebSocketServer } from 'ws';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { allTopics } from '../src/records/topics.ts';
import { createServe } from '../streams/serve.ts';
import { createRpcStub } from '../test/helpers/rpc-stub.ts';
import { blockBuilder, signedTransfers, type BlockBuilder } from '../test/helpers/view-records.ts';
import { benchContext } from './gateway.ts';
import { buildGoClient, startClients, type ClientKind, type ClientMode } from './peers/fanout-clients.ts';
import { buildFloor, startFloor } from './peers/fanout-floor.ts';
import { websocketProxyBinary } from './peers/websocket-proxy.ts';

/**
 * Fan-out, fair (issue 17): the subscribers run in client processes apart from the server (each
 * holding up to 1,000 WebSocket connections), at 1, 100, 1,000 and 10,000 subscribers, with blocks
 * appended at 5 and 50 per second (3 s and 2 s). Latency is from the append call (a
 * CLOCK_MONOTONIC µs stamp written into the log's data) to the message parsed in the client.
 * - flashlog `pendingLogs`: the gateway (view + log fan-out) in this process, fed flashblocks (10
 *   per block); each client sends eth_subscribe("pendingLogs") with no filter, so every subscriber
 *   gets every log; the gateway still runs each subscriber's filter check and writes one JSON-RPC
 *   notification per log.
 * - flashlog `logs`: the same with the blocks source (Base after Denim: each record a complete
 *   200 ms block, so the standard `logs` kind is served from the view, through the same fan-out);
 *   each client sends eth_subscribe("logs").
 * - Base's websocket-proxy (Rust; its binary from FLASHLOG_BENCH_WEBSOCKET_PROXY, else skipped): its
 *   upstream is a WebSocket server in this process sending the same block record as one text frame
 *   per append; the proxy forwards every frame, unfiltered and unparsed, to every client.
 * - the floor (Go, bench/peers/fanout-floor-go): the same `pendingLogs` notification bytes, sent by
 *   a server with nothing else to do (no log, view, parsing or filter), on one goroutine per core;
 *   the bench writes it each log's JSON. What this machine allows with these clients on its cores.
 * All wait for the same client processes; the bench is the log writer / upstream for each.
 * Target: flashlog p99 <= 20 ms at 1,000 subscribers.
 *   FLASHLOG_BENCH_FANOUT_COUNTS=1000            only these subscriber counts
 *   FLASHLOG_BENCH_FANOUT_SERVERS=pendingLogs    only these of pendingLogs, logs, proxy, floor
 *   FLASHLOG_BENCH_FANOUT_CLIENTS=go,node        the subscriber processes, each in turn against the
 *                                                same server (default go; see peers/fanout-clients.ts)
 *   FLASHLOG_BENCH_FANOUT_BASELINE=<commit-ish>  also the flashlog servers of that commit (a git archive
 *                                                in bench/.cache/), right after this tree's, same clients
 */
type Row = Record<string, unknown>;
const counts = (process.env.FLASHLOG_BENCH_FANOUT_COUNTS ?? '1,100,1000,10000').split(',').map(Number);
const phases = [
  { perSecond: 5, seconds: 3 },
  { perSecond: 50, seconds: 2 },
];
const servers = (process.env.FLASHLOG_BENCH_FANOUT_SERVERS ?? 'pendingLogs,logs,proxy,floor').split(',');
const perProcess = Number(process.env.FLASHLOG_BENCH_FANOUT_PER_PROCESS ?? 1000);
const clientKinds = (process.env.FLASHLOG_BENCH_FANOUT_CLIENTS ?? 'go').split(',') as ClientKind[];
const nowUs = (): Hex => numberToHex(process.hrtime.bigint() / 1000n, { size: 32 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The write-type syscalls this process has made (write, writev, sendmsg...; /proc/self/io `syscw`), NaN off Linux. */
const writeSyscalls = (): number => {
  try {
    return Number(/syscw: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
};

const repo = fileURLToPath(new URL('..', import.meta.url));

/** What the bench takes from a tree: this one, or a baseline commit's copy. */
interface Tree {
  readonly name: string;
  readonly createEmbeddedLog: typeof createEmbeddedLog;
  readonly allTopics: typeof allTopics;
  readonly createServe: typeof createServe;
}

/** The flashlog code of `ref` (a git archive beside this tree, made once), for a side-by-side run. */
async function baselineTree(ref: string): Promise<Tree> {
  const sha = execFileSync('git', ['-C', repo, 'rev-parse', '--short=12', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
  const root = join(repo, 'bench', '.cache', `baseline-${sha}`);
  if (!existsSync(join(root, 'streams'))) {
    // a plain copy of the commit's files, not a worktree: nothing is registered in the repository
    mkdirSync(root, { recursive: true });
    execFileSync('sh', ['-c', 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"', repo, sha, root], { stdio: 'ignore' });
  }
  if (!existsSync(join(root, 'node_modules'))) symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  const load = async <T>(path: string) => (await import(join(root, path))) as T;
  return {
    name: sha,
    createEmbeddedLog: (await load<{ createEmbeddedLog: typeof createEmbeddedLog }>('src/log/embedded/embedded.ts')).createEmbeddedLog,
    allTopics: (await load<{ allTopics: typeof allTopics }>('src/records/topics.ts')).allTopics,
    createServe: (await load<{ createServe: typeof createServe }>('streams/serve.ts')).createServe,
  };
}

/** Latency percentiles, and the CPU the clients spent per message they received. */
const stats = ({ latencies: sorted, cpuUs }: { latencies: Float64Array; cpuUs: number }, expected: number) => {
  const at = (q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN) / 1000;
  return {
    received: sorted.length,
    expected,
    'p50 ms': at(0.5),
    'p99 ms': at(0.99),
    'max ms': sorted.length ? sorted[sorted.length - 1]! / 1000 : Number.NaN,
    'client CPU µs/msg': sorted.length ? cpuUs / sorted.length : Number.NaN,
  };
};

/**
 * Appends at `perSecond` for `seconds`: flashblocks (one transfer, one log carrying the stamp), a
 * new block every `perBlock` of them (1: each append is a complete block, as the blocks source writes).
 */
async function drive(
  emit: (block: BlockBuilder, tx: { hash: Hex; raw: Hex }) => Promise<void>,
  perSecond: number,
  seconds: number,
  pool: { hash: Hex; raw: Hex }[],
  nextBlock: () => bigint,
  perBlock = 10,
): Promise<number> {
  const total = perSecond * seconds;
  const started = performance.now();
  let block = blockBuilder(nextBlock());
  for (let i = 0; i < total; i++) {
    if (i % perBlock === 0 && i > 0) block = blockBuilder(nextBlock());
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
  const goMissing = clientKinds.includes('go') ? buildGoClient() : undefined;
  if (goMissing) rows.push({ bench: 'fan-out', client: 'go', skipped: `${goMissing.skipped}; the Node client stands in` });
  const clients = [...new Set(clientKinds.map((kind) => (kind === 'go' && goMissing ? 'node' : kind)))];
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-fanout-'));
  const pool = await signedTransfers(10);
  let number = 50_000_000n;
  const nextBlock = () => number++;
  const stub = await createRpcStub({ eth_blockNumber: () => '0x1' });
  /** A peer server's rows: the same clients, counts and phases as flashlog's; `emit` sends one append. */
  const measurePeer = async (
    server: string,
    url: string,
    mode: ClientMode,
    emit: (block: BlockBuilder, tx: { hash: Hex; raw: Hex }) => void,
  ): Promise<void> => {
    for (const [count, client] of usable.flatMap((count) => clients.map((client) => [count, client] as const))) {
      const subscribers = await startClients(client, url, count, mode, perProcess);
      try {
        for (const { perSecond, seconds } of phases) {
          const appended = await drive(async (block, tx) => emit(block, tx), perSecond, seconds, pool, nextBlock);
          rows.push({
            bench: 'fan-out (append -> client)',
            server,
            subscribers: count,
            client,
            'blocks/s': perSecond,
            'failed connections': subscribers.failed,
            ...stats(await subscribers.report(), appended * (count - subscribers.failed)),
          });
        }
      } finally {
        subscribers.close();
      }
    }
  };
  try {
    // flashlog's gateway: pendingLogs on a flashblocks feed, logs on the blocks source
    const flashlogRuns = [
      { kind: 'pendingLogs' as const, overrides: { source: 'flashblocks' as const }, perBlock: 10 },
      { kind: 'logs' as const, overrides: { source: 'blocks' as const }, perBlock: 1 },
    ].filter((each) => servers.includes(each.kind));
    const baseline = process.env.FLASHLOG_BENCH_FANOUT_BASELINE;
    const trees: Tree[] = [
      { name: 'this tree', createEmbeddedLog, allTopics, createServe },
      ...(baseline && flashlogRuns.length > 0 ? [await baselineTree(baseline)] : []),
    ];
    for (const [{ kind, overrides, perBlock }, tree] of flashlogRuns.flatMap((run) => trees.map((tree) => [run, tree] as const))) {
      // each server its own data dir (its log and view snapshot)
      const dataDir = join(dir, `${kind}-${trees.indexOf(tree)}`);
      mkdirSync(dataDir);
      const log = tree.createEmbeddedLog({ path: join(dataDir, 'flashlog.db') });
      await log.ensureTopics(tree.allTopics.map((name) => ({ name })));
      const ctx = benchContext(dataDir, { maxConnections: 20_000, ...overrides });
      const serve = await tree.createServe(ctx, { log, rpcUrl: stub.url, source: overrides.source });
      /** The gateway's log fan-out so far: batches, and seconds from queued to the last subscriber written. */
      const fanout = async () => {
        const values = (await ctx.metrics.getSingleMetric('flashlog_ws_log_fanout_seconds')?.get())?.values ?? [];
        const of = (suffix: string) =>
          values.find((value) => (value as { metricName?: string }).metricName === `flashlog_ws_log_fanout_seconds_${suffix}`)?.value ?? 0;
        return { count: of('count'), seconds: of('sum') };
      };
      try {
        for (const [count, client] of usable.flatMap((count) => clients.map((client) => [count, client] as const))) {
          const subscribers = await startClients(client, serve.gateway.wsUrl, count, kind, perProcess);
          try {
            for (const { perSecond, seconds } of phases) {
              const fanoutFrom = await fanout();
              const cpuFrom = process.cpuUsage();
              const syscallsFrom = writeSyscalls();
              const appended = await drive(
                async (block, tx) => {
                  await log.produce(block.flashblock([tx], { logsPerTx: 1, data: nowUs }));
                },
                perSecond,
                seconds,
                pool,
                nextBlock,
                perBlock,
              );
              const cpu = process.cpuUsage(cpuFrom);
              const syscalls = writeSyscalls() - syscallsFrom;
              const fanoutTo = await fanout();
              const measured = stats(await subscribers.report(), appended * (count - subscribers.failed));
              rows.push({
                bench: 'fan-out (append -> client)',
                server: `flashlog ${kind}`,
                ...(trees.length > 1 ? { code: tree.name } : {}),
                subscribers: count,
                client,
                'blocks/s': perSecond,
                'failed connections': subscribers.failed,
                ...measured,
                // where the time goes: the gateway's fan-out (queued -> last subscriber written), and
                // the gateway process's CPU (log, view, fan-out) per notification delivered
                'gateway fan-out mean ms':
                  ((fanoutTo.seconds - fanoutFrom.seconds) * 1000) / Math.max(1, fanoutTo.count - fanoutFrom.count),
                'gateway CPU µs/msg': (cpu.user + cpu.system) / Math.max(1, measured.received),
                // the gateway process's write syscalls (the log's appends included) per second, and
                // notifications delivered per write
                'gateway writes/s': syscalls / seconds,
                'msgs per write': measured.received / Math.max(1, syscalls),
              });
            }
          } finally {
            subscribers.close();
          }
        }
      } finally {
        await serve.close();
        await log.close();
      }
    }
    // Base's websocket-proxy, fed the same block records as upstream frames
    const built = servers.includes('proxy') ? websocketProxyBinary() : undefined;
    if (!built) {
      // the proxy was not asked for (FLASHLOG_BENCH_FANOUT_SERVERS)
    } else if ('skipped' in built) {
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
        await measurePeer(`websocket-proxy (${built.version})`, `ws://127.0.0.1:${port}/ws`, 'proxy', (block, tx) => {
          const [record] = block.flashblock([tx], { logsPerTx: 1, data: nowUs });
          for (const socket of upstream.clients) socket.send(record!.value);
        });
      } finally {
        proxy.kill();
        for (const socket of upstream.clients) socket.terminate();
        upstream.close();
      }
    }
    // the floor: the same notifications from a server with nothing else to do
    const floorMissing = servers.includes('floor') ? buildFloor() : { skipped: 'not asked for' };
    if (floorMissing && servers.includes('floor'))
      rows.push({ bench: 'fan-out (append -> client)', server: 'floor', skipped: floorMissing.skipped });
    if (!floorMissing) {
      const floor = await startFloor();
      try {
        await measurePeer('floor (Go, pendingLogs bytes, one goroutine per core)', floor.url, 'pendingLogs', (block, tx) => {
          block.flashblock([tx], { logsPerTx: 1, data: nowUs });
          floor.send(JSON.stringify(block.logs().at(-1)));
        });
      } finally {
        floor.close();
      }
    }
  } finally {
    await stub.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const same = (row: Row, other: Row) =>
    other.subscribers === row.subscribers && other.client === row.client && other['blocks/s'] === row['blocks/s'];
  for (const row of rows) {
    if (typeof row['p99 ms'] !== 'number') continue;
    const floor = rows.find((other) => String(other.server).startsWith('floor') && same(row, other));
    if (floor !== row && typeof floor?.['p99 ms'] === 'number') row['p99 x floor'] = row['p99 ms'] / floor['p99 ms'];
    if (!String(row.server).startsWith('flashlog')) continue;
    const peer = rows.find((other) => String(other.server).startsWith('websocket-proxy') && same(row, other));
    if (typeof peer?.['p99 ms'] === 'number') row['p99 x websocket-proxy'] = row['p99 ms'] / peer['p99 ms'];
    if (row.subscribers === 1000) row['p99 x target (20 ms)'] = row['p99 ms'] / 20;
  }
  return rows;
}
