import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { Agent, createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { spawnFlashlog } from '../test/helpers/flashlog-process.ts';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { allTopics } from '../src/records/topics.ts';
import { createServe } from '../streams/serve.ts';
import { blockBuilder, signedTransfers } from '../test/helpers/view-records.ts';
import { benchContext, loadWorker, runWorker } from './gateway.ts';

/**
 * Calls on pre-confirmed state (issue 5), side by side in one run: eth_call and eth_estimateGas
 * with `pending` through the gateway (the pending diff laid under the call as state overrides,
 * executed by the devnet node as upstream) against the same execution asked of the node directly
 * (`latest` with the same overrides): the ratio is what the gateway adds. eth_simulateV1 (one
 * block, three calls) runs on flashlog's own engine, its state reads cached after the first. The pending block holds
 * one contract only the diff knows (code returning SLOAD(0), slot 0 = 42). 16 keep-alive
 * connections from a worker thread, 4 s each. The devnet node runs in its own process (`flashlog
 * devnet`), as an upstream node does: in this process it shared the gateway's one thread, so every
 * call through the gateway paid for the node's execution and the gateway's work on one core, and
 * its p99 was 3x the node's (34.5 ms vs 11.5 ms) for that reason.
 * Target: >= 500 eth_call/s and p99 <= 20 ms on one core.
 */
type Row = Record<string, unknown>;
const contract = '0x00000000000000000000000000000000000c0de1' as Hex;
const runtime = '0x60005460005260206000f3';
const slot0 = `0x${'0'.repeat(64)}`;
const word42 = `0x${'0'.repeat(62)}2a`;
const funded = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** `flashlog devnet` in its own process; resolves once its RPC answers. */
async function startDevnetProcess(): Promise<{ rpcUrl: string; stop(): Promise<unknown> }> {
  const [rpcPort, wsPort] = [await freePort(), await freePort()];
  const child = spawnFlashlog([
    'devnet',
    '--devnet-port',
    String(rpcPort),
    '--devnet-ws-port',
    String(wsPort),
    '--no-metrics',
    '--log-level',
    'warn',
  ]);
  const rpcUrl = `http://127.0.0.1:${rpcPort}`;
  for (let attempt = 0; ; attempt++) {
    const answered = await fetch(rpcUrl, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (answered) break;
    if (attempt > 300 || child.child.exitCode !== null) {
      await child.stop();
      throw new Error('flashlog devnet did not answer in 30 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { rpcUrl, stop: () => child.stop() };
}

/**
 * The least any process between client and node costs on this machine: a node:http server that
 * hands each body to the node over keep-alive connections and the answer back, parsing nothing.
 * The gateway does this plus its JSON-RPC work (parse, validate, the pending diff as overrides).
 */
async function startRelay(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const { hostname, port } = new URL(target);
  const server = createHttpServer((request, response) => {
    const upstream = httpRequest(
      { host: hostname, port, method: 'POST', path: '/', agent, headers: { 'content-type': 'application/json' } },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.writeHead(502).end());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'flashlog-bench-calls-'));
  const devnet = await startDevnetProcess();
  const log = createEmbeddedLog({ path: join(dir, 'flashlog.db') });
  try {
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    const head = BigInt(
      await fetch(devnet.rpcUrl, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) })
        .then((response) => response.json() as Promise<{ result: string }>)
        .then((body) => body.result),
    );
    const block = blockBuilder(head + 1n);
    const pool = await signedTransfers(20);
    await log.produce(
      block.flashblock(pool, { stateDiff: { [contract]: { balance: '0x0', nonce: '0x1', code: runtime, storage: { [slot0]: word42 } } } }),
    );
    const ctx = benchContext(dir, { callTimeoutMs: 10_000 });
    const relay = await startRelay(devnet.rpcUrl);
    const serve = await createServe(ctx, { log, rpcUrl: devnet.rpcUrl });
    try {
      const overrides = { [contract]: { balance: '0x0', nonce: '0x1', code: runtime, stateDiff: { [slot0]: word42 } } };
      const check = (await fetch(serve.gateway.url, {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: contract }, 'pending'] }),
      }).then((r) => r.json())) as { result?: string };
      if (check.result !== word42) throw new Error(`eth_call pending did not see the pending diff: ${JSON.stringify(check)}`);
      const simulation = (block: string) => ({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_simulateV1',
        params: [
          {
            blockStateCalls: [
              { calls: [{ to: contract }, { from: funded, to: contract, value: '0x1' }, { from: funded, to: funded, value: '0x2' }] },
            ],
            traceTransfers: true,
          },
          block,
        ],
      });
      const simulated = (await fetch(serve.gateway.url, { method: 'POST', body: JSON.stringify(simulation('pending')) }).then((r) =>
        r.json(),
      )) as { result?: { calls: { returnData: string }[] }[] };
      if (simulated.result?.[0]?.calls[0]?.returnData !== word42)
        throw new Error(`eth_simulateV1 pending did not see the pending diff: ${JSON.stringify(simulated).slice(0, 300)}`);
      const cases: [string, string, unknown][] = [
        [
          'eth_call pending (contract only in the pending diff)',
          'gateway',
          { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: contract }, 'pending'] },
        ],
        [
          'eth_call pending (contract only in the pending diff)',
          'devnet node, same call and overrides',
          { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: contract }, `0x${head.toString(16)}`, overrides] },
        ],
        [
          'eth_call pending (contract only in the pending diff)',
          'relay: node:http pass-through to the node, no JSON-RPC work (same call and overrides)',
          { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [{ to: contract }, `0x${head.toString(16)}`, overrides] },
        ],
        [
          'eth_estimateGas pending (transfer)',
          'gateway (own search)',
          { jsonrpc: '2.0', id: 1, method: 'eth_estimateGas', params: [{ from: funded, to: contract, value: '0x1' }, 'pending'] },
        ],
        [
          'eth_estimateGas pending (contract call)',
          'gateway (own search)',
          { jsonrpc: '2.0', id: 1, method: 'eth_estimateGas', params: [{ from: funded, to: contract, data: '0x01' }, 'pending'] },
        ],
        ['eth_simulateV1 pending (1 block, 3 calls, traceTransfers; warm state cache)', 'gateway (own engine)', simulation('pending')],
        ['eth_simulateV1 latest (same payload; warm state cache)', 'gateway (own engine)', simulation('latest')],
      ];
      for (const [bench, server, request] of cases) {
        const url = server.startsWith('gateway') ? serve.gateway.url : server.startsWith('relay') ? relay.url : devnet.rpcUrl;
        const result = await runWorker<{ done: number; errors: number; perSecond: number; p50: number; p99: number }>(loadWorker, {
          url,
          body: JSON.stringify(request),
          concurrency: 16,
          durationMs: 4000,
        });
        rows.push({
          bench,
          server,
          requests: result.done,
          errors: result.errors,
          'req/s': Math.round(result.perSecond),
          'p50 ms': result.p50,
          'p99 ms': result.p99,
        });
      }
      const [viaGateway, direct, relayed] = rows;
      if (relayed && direct && viaGateway) {
        relayed['p50 x node direct'] = Number(relayed['p50 ms']) / Number(direct['p50 ms']);
        relayed['p99 x node direct'] = Number(relayed['p99 ms']) / Number(direct['p99 ms']);
        viaGateway['p99 x relay'] = Number(viaGateway['p99 ms']) / Number(relayed['p99 ms']);
        viaGateway['p50 x relay'] = Number(viaGateway['p50 ms']) / Number(relayed['p50 ms']);
      }
      if (viaGateway && direct) {
        viaGateway['x node direct (req/s)'] = Number(viaGateway['req/s']) / Number(direct['req/s']);
        viaGateway['x target 500/s'] = Number(viaGateway['req/s']) / 500;
        viaGateway['p99 x target 20 ms'] = Number(viaGateway['p99 ms']) / 20;
        viaGateway['p50 x node direct'] = Number(viaGateway['p50 ms']) / Number(direct['p50 ms']);
        viaGateway['p99 x node direct'] = Number(viaGateway['p99 ms']) / Number(direct['p99 ms']);
      }
    } finally {
      await serve.close();
      await relay.close();
      await ctx.shutdown.run();
    }
  } finally {
    await log.close();
    await devnet.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
