import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { encodeFunctionData, type Hex } from 'viem';
import { DevnetToken } from '../devnet/contracts/bytecode.ts';
import { spawnFlashlog } from '../test/helpers/flashlog-process.ts';
import { gethBinary, gethVersion, startGethDev } from './peers/geth-dev.ts';

/**
 * The gateway beside geth, in one run (`npm run bench -- gateway`): geth `--dev` (a block a
 * second, about 93 logs a block: bench/peers/geth-dev.ts) with `flashlog run --source blocks`
 * over it, each in its own process. The same load generator (a worker thread, 16 keep-alive
 * connections, 3 s) asks flashlog for `pending` and geth for `latest`:
 * `eth_getBlockByNumber(…, false)`, `eth_getLogs` of that one block, and `eth_call` of a view
 * function (an ERC-20 `balanceOf`). Three rounds, the order of the two servers alternating each
 * round; medians. Between rounds, samples check that flashlog's pending logs are the node's logs
 * of that block (same count and content) and that its pending block is never older than the
 * geth `latest` read just before it.
 * Then what the node carries for those reads: a second flashlog over the same log, its `--rpc`
 * through a relay that counts the calls by method, read by the same load for 3 s per call.
 * Targets (flashlog pending / geth latest): block ≥ 1.2x, logs ≥ 1.2x, eth_call ≥ 0.4x.
 */
type Row = Record<string, unknown>;
type Json = Record<string, unknown>;
const ROUNDS = 3;
const DURATION_MS = 3000;
const CONCURRENCY = 16;
const SAMPLES = 20;

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/**
 * CPU seconds a process has used (user + system), from Linux's /proc/<pid>/stat (fields 14 and 15,
 * in clock ticks of 1/100 s, Linux's USER_HZ); undefined where there is no /proc.
 */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/**
 * Whether flashlog's logs are the node's: the same count, and every field the node gives equal
 * (flashlog adds `blockTimestampMs` where the node leaves it out: docs/ingest.md); the fields
 * flashlog adds are collected in `extra`.
 */
function sameAsNode(ours: Json[], node: Json[], extra: Set<string>): boolean {
  if (ours.length !== node.length) return false;
  return node.every((log, i) => {
    const mine = ours[i]!;
    for (const key of Object.keys(mine)) if (!(key in log)) extra.add(key);
    return Object.keys(log).every((key) => isDeepStrictEqual(mine[key], log[key]));
  });
}

/** flashlog's pending logs against geth's logs of the same block, and pending against geth's latest just before. */
async function checkAnswers(gateway: string, geth: string, extra: Set<string>) {
  let same = 0;
  let different = 0;
  let empty = 0;
  let older = 0;
  const counts: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const latest = BigInt(await rpc<Hex>(geth, 'eth_blockNumber', []));
    const pending = await rpc<{ number: Hex; hash: Hex }>(gateway, 'eth_getBlockByNumber', ['pending', false]);
    if (BigInt(pending.number) < latest) older++;
    const logs = await rpc<Json[]>(gateway, 'eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]);
    const hash = logs[0]?.blockHash as Hex | undefined;
    if (!hash) {
      empty++;
      continue;
    }
    counts.push(logs.length);
    const nodeLogs = await rpc<Json[]>(geth, 'eth_getLogs', [{ blockHash: hash }]);
    if (nodeLogs.length > 0 && sameAsNode(logs, nodeLogs, extra)) same++;
    else different++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { same, different, empty, older, logsPerAnswer: median(counts) };
}

/** A node:http pass-through to `target` over keep-alive connections that counts the JSON-RPC calls by method. */
async function countingRelay(target: string): Promise<{ url: string; calls: Map<string, number>; close(): Promise<void> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(target);
  const calls = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { method?: string } | { method?: string }[];
        for (const { method } of Array.isArray(parsed) ? parsed : [parsed]) calls.set(String(method), (calls.get(String(method)) ?? 0) + 1);
      } catch {
        calls.set('(unparsed)', (calls.get('(unparsed)') ?? 0) + 1);
      }
      const upstream = httpRequest(
        { host: hostname, port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json' } },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
          answer.pipe(response);
        },
      );
      upstream.on('error', () => response.writeHead(502).end());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

/**
 * The ceiling of a Node server on this machine: a bare node:http server in its own process that
 * answers every POST with `answer` (flashlog's own answer to the case, read once), with no JSON-RPC
 * work at all.
 */
const bareServer = `
const http = require('node:http');
const chunks = []; process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const answer = Buffer.concat(chunks);
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer));
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
});`;

async function startBare(answer: string): Promise<{ url: string; pid: number | undefined; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['-e', bareServer], { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(answer);
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare node:http server exited ${code}`)));
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function startFlashlog(dir: string, rpcUrl: string, wsUrl: string) {
  return spawnFlashlog([
    'run',
    '--source',
    'blocks',
    '--rpc',
    rpcUrl,
    '--rpc-ws',
    wsUrl,
    '--port',
    '0',
    '--data-dir',
    dir,
    '--view-snapshot',
    'off',
    '--no-metrics',
    '--log-level',
    'info',
  ]);
}

/**
 * The gateway's URL once it listens and its view is at the node's head: its pending block carries
 * the load's logs and is not below geth's `latest` read just before, five times in a row (a
 * restarted gateway first reads the blocks it missed).
 */
async function gatewayAtHead(flashlog: ReturnType<typeof spawnFlashlog>, geth: string): Promise<string> {
  const gateway = String((await flashlog.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
  const deadline = Date.now() + 60_000;
  for (let atHead = 0; atHead < 5;) {
    if (Date.now() > deadline) throw new Error('flashlog over geth --dev: its pending block did not reach the node head in 60 s');
    const latest = BigInt(await rpc<Hex>(geth, 'eth_blockNumber', []));
    const pending = await rpc<{ number: Hex }>(gateway, 'eth_getBlockByNumber', ['pending', false]);
    const logs = await rpc<Json[]>(gateway, 'eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]);
    atHead = BigInt(pending.number) >= latest && logs.length > 0 ? atHead + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return gateway;
}

/** What the load generator measures of one server (bench/gateway.ts's worker). */
export interface Measured {
  readonly done: number;
  readonly errors: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}
/** Runs the load generator: `concurrency` keep-alive connections posting `body` to `url` for `durationMs`. */
export type Load = (options: { url: string; body: string; concurrency: number; durationMs: number }) => Promise<Measured>;

export async function besideGeth(load: Load): Promise<Row[]> {
  const binary = gethBinary();
  if ('skip' in binary) {
    process.stderr.write(`${binary.skip}\n`);
    return [{ bench: `beside geth ${gethVersion}`, skipped: binary.skip }];
  }
  const rows: Row[] = [];
  const geth = await startGethDev(binary.path, { periodS: 1, logsPerBlock: 93 });
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-gateway-geth-'));
  let flashlog = startFlashlog(dir, geth.url, geth.wsUrl);
  let relay: Awaited<ReturnType<typeof countingRelay>> | undefined;
  try {
    let gateway = await gatewayAtHead(flashlog, geth.url);
    const balanceOf = encodeFunctionData({ abi: DevnetToken.abi, functionName: 'balanceOf', args: [geth.account] });
    const cases: { bench: string; target: number; flashlog: unknown[]; geth: unknown[]; method: string }[] = [
      {
        bench: 'eth_getBlockByNumber(…, false)',
        method: 'eth_getBlockByNumber',
        target: 1.2,
        flashlog: ['pending', false],
        geth: ['latest', false],
      },
      {
        bench: 'eth_getLogs of the newest block',
        method: 'eth_getLogs',
        target: 1.2,
        flashlog: [{ fromBlock: 'pending', toBlock: 'pending' }],
        geth: [{ fromBlock: 'latest', toBlock: 'latest' }],
      },
      {
        bench: 'eth_call of a view function (ERC-20 balanceOf)',
        method: 'eth_call',
        target: 0.4,
        flashlog: [{ to: geth.token, data: balanceOf }, 'pending'],
        geth: [{ to: geth.token, data: balanceOf }, 'latest'],
      },
    ];
    const measured = new Map<string, (Measured & { flashlogCpuUs: number; gethCpuUs: number; bareCpuUs: number })[]>();
    const extra = new Set<string>();
    const checks: Awaited<ReturnType<typeof checkAnswers>>[] = [await checkAnswers(gateway, geth.url, extra)];
    for (let round = 0; round < ROUNDS; round++) {
      for (const test of cases) {
        const order = round % 2 === 0 ? (['flashlog', 'geth', 'bare'] as const) : (['bare', 'geth', 'flashlog'] as const);
        // The bare server answers flashlog's answer to this case, as read now.
        const bare = await startBare(
          await fetch(gateway, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: test.method, params: test.flashlog }),
          }).then((response) => response.text()),
        );
        try {
          for (const server of order) {
            const body = JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: test.method,
              params: test[server === 'bare' ? 'flashlog' : server],
            });
            const pids = [flashlog.child.pid, geth.pid, bare.pid];
            const cpuBefore = pids.map(cpuSeconds);
            const result = await load({
              url: server === 'flashlog' ? gateway : server === 'geth' ? geth.url : bare.url,
              body,
              concurrency: CONCURRENCY,
              durationMs: DURATION_MS,
            });
            const cpuAfter = pids.map(cpuSeconds);
            // CPU µs per request of each process over the round (each also does its own background work).
            const perRequest = (i: number) =>
              cpuBefore[i] === undefined || cpuAfter[i] === undefined
                ? Number.NaN
                : ((cpuAfter[i]! - cpuBefore[i]!) * 1e6) / Math.max(1, result.done);
            const key = `${test.bench}|${server}`;
            measured.set(key, [
              ...(measured.get(key) ?? []),
              { ...result, flashlogCpuUs: perRequest(0), gethCpuUs: perRequest(1), bareCpuUs: perRequest(2) },
            ]);
          }
        } finally {
          await bare.close();
        }
      }
      checks.push(await checkAnswers(gateway, geth.url, extra));
    }
    for (const test of cases) {
      const of = (server: 'flashlog' | 'geth' | 'bare') => {
        const results = measured.get(`${test.bench}|${server}`) ?? [];
        return {
          perSecond: median(results.map((result) => result.perSecond)),
          rounds: results.map((result) => Math.round(result.perSecond)).join(' / '),
          p50: median(results.map((result) => result.p50)),
          p99: median(results.map((result) => result.p99)),
          errors: results.reduce((sum, result) => sum + result.errors, 0),
          requests: results.reduce((sum, result) => sum + result.done, 0),
          flashlogCpuUs: median(results.map((result) => result.flashlogCpuUs)),
          gethCpuUs: median(results.map((result) => result.gethCpuUs)),
          bareCpuUs: median(results.map((result) => result.bareCpuUs)),
        };
      };
      const [ours, theirs] = [of('flashlog'), of('geth')];
      const ratio = ours.perSecond / theirs.perSecond;
      for (const [server, figures] of [
        ['flashlog pending', ours],
        [`geth ${gethVersion} latest`, theirs],
        ["bare node:http, flashlog's answer, no JSON-RPC work (ceiling)", of('bare')],
      ] as const)
        rows.push({
          bench: `beside geth: ${test.bench}`,
          server,
          requests: figures.requests,
          errors: figures.errors,
          'req/s (median)': Math.round(figures.perSecond),
          'req/s rounds': figures.rounds,
          'p50 ms': figures.p50,
          'p99 ms': figures.p99,
          'flashlog CPU µs/request': figures.flashlogCpuUs,
          'geth CPU µs/request': figures.gethCpuUs,
          ...(server.startsWith('bare')
            ? { 'bare CPU µs/request': figures.bareCpuUs, 'x geth': figures.perSecond / theirs.perSecond }
            : {}),
          ...(server.startsWith('flashlog') ? { 'x geth': ratio, target: `≥ ${test.target}x`, met: ratio >= test.target } : {}),
        });
    }
    const total = checks.reduce(
      (sum, check) => ({
        same: sum.same + check.same,
        different: sum.different + check.different,
        empty: sum.empty + check.empty,
        older: sum.older + check.older,
      }),
      { same: 0, different: 0, empty: 0, older: 0 },
    );
    rows.push({
      bench: 'beside geth: answers checked',
      server: 'flashlog pending vs geth',
      samples: checks.length * SAMPLES,
      'logs = node logs of that block': total.same,
      'logs differ': total.different,
      'no pending logs': total.empty,
      'pending older than geth latest': total.older,
      'fields flashlog adds': [...extra].join(', '),
      'logs per answer (median)': median(checks.map((check) => check.logsPerAnswer)),
      'load txs sent / failed': `${geth.sent().transactions} / ${geth.sent().failed}${geth.sent().firstFailure ? ` (${geth.sent().firstFailure})` : ''}`,
    });
    // What the node carries: the same reads through a second flashlog whose --rpc is counted.
    await flashlog.stop();
    relay = await countingRelay(geth.url);
    flashlog = startFlashlog(dir, relay.url, geth.wsUrl);
    gateway = await gatewayAtHead(flashlog, geth.url);
    for (const test of cases) {
      relay.calls.clear();
      const result = await load({
        url: gateway,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: test.method, params: test.flashlog }),
        concurrency: CONCURRENCY,
        durationMs: DURATION_MS,
      });
      const calls = [...relay.calls].sort(([, a], [, b]) => b - a);
      const total = calls.reduce((sum, [, count]) => sum + count, 0);
      rows.push({
        bench: `beside geth: node calls per pending read, ${test.bench}`,
        server: 'flashlog pending (its --rpc counted)',
        requests: result.done,
        errors: result.errors,
        'node calls': total,
        'node calls per read': total / Math.max(1, result.done),
        'node calls by method': calls.map(([method, count]) => `${method} ${count}`).join(', '),
      });
    }
  } finally {
    await flashlog.stop();
    await relay?.close();
    await geth.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
