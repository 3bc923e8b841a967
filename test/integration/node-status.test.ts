import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { checkUpstreamLag } from '../../src/node/status.ts';
import type { Logger } from '../../src/obs/logger.ts';

/**
 * `flashlog node-status` as operators run it: the devnet (flashblocks mode) and the Denim devnet
 * (`devnet --denim`: 200 ms blocks with timestampMs, and `optimism_syncStatus` on the same port,
 * answered from its real blocks with the safe head 10 blocks behind) are the execution and
 * consensus RPCs; for the flashblocks devnet a local server speaks `optimism_syncStatus` in the
 * real response shape. Small proxies in front of the devnets make the faults, each stated where
 * it is made: a frozen head, a frozen safe head, blocks without timestampMs, Base's chain ID.
 */
const cli = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
let devnet: Devnet;
let denim: Devnet;
const servers: Server[] = [];

async function listen(handler: (body: { method: string; params: unknown[]; id: unknown }) => Promise<unknown> | unknown): Promise<string> {
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    request.on('end', async () => {
      const body = JSON.parse(text) as { method: string; params: unknown[]; id: unknown };
      const answer = await handler(body);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** op-node's syncStatus, abridged to the real shape: L1 refs and L2 refs with numbers as JSON numbers. */
const syncStatus = (unsafeTimestamp: number, unsafeNumber = 1234) => {
  const l1 = { hash: `0x${'11'.repeat(32)}`, number: 100, parentHash: `0x${'10'.repeat(32)}`, timestamp: unsafeTimestamp - 60 };
  const l2 = (number: number, timestamp: number) => ({
    hash: `0x${'22'.repeat(32)}`,
    number: Math.max(0, number),
    parentHash: `0x${'21'.repeat(32)}`,
    timestamp: Math.max(0, timestamp),
    l1origin: { hash: l1.hash, number: l1.number },
    sequenceNumber: 3,
  });
  return {
    current_l1: l1,
    current_l1_finalized: l1,
    head_l1: l1,
    safe_l1: l1,
    finalized_l1: l1,
    unsafe_l2: l2(unsafeNumber, unsafeTimestamp),
    safe_l2: l2(unsafeNumber - 10, unsafeTimestamp - 20),
    finalized_l2: l2(unsafeNumber - 100, unsafeTimestamp - 200),
    pending_safe_l2: l2(unsafeNumber - 10, unsafeTimestamp - 20),
    cross_unsafe_l2: l2(unsafeNumber, unsafeTimestamp),
    local_safe_l2: l2(unsafeNumber - 10, unsafeTimestamp - 20),
  };
};
const consensus = (timestamp: () => number, unsafeNumber?: number) =>
  listen((body) => ({ jsonrpc: '2.0', id: body.id, result: syncStatus(timestamp(), unsafeNumber) }));

function nodeStatus(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, 'node-status', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout }));
  });
}

beforeAll(async () => {
  [devnet, denim] = await Promise.all([createDevnet({ blockTimeMs: 1000, flashblockMs: 200 }), createDevnet({ denim: true })]);
  await new Promise((resolve) => setTimeout(resolve, 1500)); // a block or two
});
afterAll(async () => {
  for (const server of servers) server.close();
  await devnet?.close();
  await denim?.close();
});

/** A JSON-RPC proxy to `target` that may rewrite one answer. */
const proxy = (target: () => string, rewrite: (method: string, params: unknown[], result: unknown) => unknown) =>
  listen(async (body) => {
    const response = await fetch(target(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = (await response.json()) as { result?: unknown };
    return { ...answer, result: rewrite(body.method, body.params ?? [], answer.result) };
  });

describe('flashlog node-status', () => {
  it('healthy: in sync, chain and latest block, pre-confirmation status; exit 0', async () => {
    const consensusUrl = await consensus(() => Math.floor(Date.now() / 1000) - 4);
    const { code, stdout } = await nodeStatus(['--rpc', devnet.rpcUrl, '--consensus-rpc', consensusUrl, '--expect-chain-id', '1337']);
    expect(stdout).toMatch(/^execution RPC: ok, http:\/\/127\.0\.0\.1:\d+ serves chain 1337, latest block \d+/m);
    expect(stdout).toContain('chain: ok, 1337 as expected');
    expect(stdout).toMatch(/^lag: ok, unsafe L2 head 1234 is 0\.\d minutes old \(limit 5\)$/m);
    expect(stdout).toContain('safe head: ok, safe L2 head 1224 is 20 s (10 blocks) behind the unsafe head (limit 30 minutes)');
    expect(stdout).toMatch(/pre-confirmations: (served|not served)/);
    expect(code, stdout).toBe(0);
    expect(stdout).toContain('rule: flashblocks (the latest block has no timestampMs: a chain that streams flashblocks)');
    const json = await nodeStatus(['--rpc', devnet.rpcUrl, '--consensus-rpc', consensusUrl, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      exitCode: 0,
      healthy: true,
      chainId: 1337,
      rule: 'flashblocks',
      cadence: null,
      unsafeL2: { number: 1234 },
      safeL2: { number: 1224 },
      safeLag: { healthy: true, blocks: 10, seconds: 20, limitMinutes: 30 },
    });
  });

  it('behind: more than --max-lag-minutes exits 1 with the minutes', async () => {
    const consensusUrl = await consensus(() => Math.floor(Date.now() / 1000) - 11 * 60);
    const { code, stdout } = await nodeStatus(['--rpc', devnet.rpcUrl, '--consensus-rpc', consensusUrl, '--max-lag-minutes', '5']);
    expect(stdout).toMatch(/^lag: FAIL, behind: unsafe L2 head 1234 is 11\.\d minutes old \(limit 5\)$/m);
    expect(code).toBe(1);
    const relaxed = await nodeStatus(['--rpc', devnet.rpcUrl, '--consensus-rpc', consensusUrl, '--max-lag-minutes', '20']);
    expect(relaxed.code).toBe(0);
  });

  it('not syncing: a consensus client with no unsafe L2 head yet exits 1', async () => {
    const consensusUrl = await consensus(() => 0, 0);
    const { code, stdout } = await nodeStatus(['--rpc', devnet.rpcUrl, '--consensus-rpc', consensusUrl]);
    expect(stdout).toContain('lag: FAIL, not syncing: the consensus client reports no unsafe L2 head yet');
    expect(code).toBe(1);
  });

  it('unreachable: a closed port exits 2 and names the RPC; a wrong chain exits 1', async () => {
    const closed = await nodeStatus(['--rpc', 'http://127.0.0.1:1', '--rpc-timeout-ms', '1000']);
    expect(closed.stdout).toContain('execution RPC: FAIL, http://127.0.0.1:1 unreachable');
    expect(closed.code).toBe(2);
    const consensusDown = await nodeStatus(['--rpc', devnet.rpcUrl, '--consensus-rpc', 'http://127.0.0.1:1']);
    expect(consensusDown.stdout).toContain('lag: FAIL, consensus RPC http://127.0.0.1:1 unreachable');
    expect(consensusDown.code).toBe(2);
    const wrongChain = await nodeStatus(['--rpc', devnet.rpcUrl, '--expect-chain-id', '8453']);
    expect(wrongChain.stdout).toContain('chain: FAIL, the node serves chain 1337, expected 8453');
    expect(wrongChain.code).toBe(1);
  });

  it('no pending: a node that answers pending with its latest block is reported as not serving pre-confirmations', async () => {
    // A node without a flashblocks feed: pending is the latest block (here, the devnet behind a proxy that says so).
    const noPending = await listen(async (body) => {
      const params = (body.params ?? []).map((param) => (param === 'pending' ? 'latest' : param));
      const response = await fetch(devnet.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, params }),
      });
      return response.json();
    });
    const consensusUrl = await consensus(() => Math.floor(Date.now() / 1000));
    const { code, stdout } = await nodeStatus(['--rpc', noPending, '--consensus-rpc', consensusUrl, '--json']);
    const status = JSON.parse(stdout) as { preconfirmations: { served: boolean }; lines: string[] };
    expect(status.preconfirmations.served).toBe(false);
    expect(status.lines.join('\n')).toContain('pre-confirmations: not served');
    expect(code).toBe(0);
  });

  it('checkUpstreamLag (ingest/serve at start): silent on a current upstream, warns when behind or unreachable', async () => {
    const warnings: string[] = [];
    const logger = {
      warn: (_fields: unknown, message: string) => {
        warnings.push(message);
      },
    } as unknown as Logger;
    const current = await checkUpstreamLag(devnet.rpcUrl, logger);
    expect(current?.exitCode).toBe(0);
    expect(current?.lines.join('\n')).toContain('lag: ok, latest block');
    expect(warnings).toEqual([]);
    // An upstream whose latest block is 20 minutes old (no consensus RPC known: the block's age is the measure).
    const stale = await listen(async (body) => {
      const response = await fetch(devnet.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as { result?: { timestamp?: string } | string | null };
      if (body.method === 'eth_getBlockByNumber' && answer.result && typeof answer.result === 'object') {
        answer.result.timestamp = `0x${(Math.floor(Date.now() / 1000) - 20 * 60).toString(16)}`;
      }
      return answer;
    });
    expect((await checkUpstreamLag(stale, logger))?.exitCode).toBe(1);
    expect(warnings).toEqual(['upstream RPC is behind: pending answers will be stale until it catches up']);
    expect((await checkUpstreamLag('http://127.0.0.1:1', logger, 5, 1000))?.exitCode).toBe(2);
    expect(warnings[1]).toBe('upstream RPC unreachable at start');
  });
});

describe('flashlog node-status on a Denim node (devnet --denim)', () => {
  type Status = {
    rule: string;
    ruleReason: string;
    chainId: number;
    cadence: { healthy: boolean; blocks: number; timestampMs: boolean; chainIntervalMs: number | null; targetMs: number };
    safeLag: { healthy: boolean; blocks: number; seconds: number } | null;
    preconfirmations: unknown;
    latestTimestampMs: number | null;
    lines: string[];
  };

  it('healthy: the head advances about every 200 ms, the unsafe head is current, the safe head close behind; exit 0', async () => {
    const { code, stdout } = await nodeStatus([
      '--rpc',
      denim.rpcUrl,
      '--consensus-rpc',
      denim.rpcUrl,
      '--expect-chain-id',
      '1337',
      '--cadence-window-ms',
      '1500',
      '--json',
    ]);
    const status = JSON.parse(stdout) as Status;
    expect(status.rule, stdout).toBe('denim');
    expect(status.ruleReason).toContain('timestampMs');
    expect(status.cadence).toMatchObject({ healthy: true, timestampMs: true, chainIntervalMs: 200, targetMs: 200 });
    expect(status.cadence.blocks).toBeGreaterThan(0);
    expect(status.preconfirmations).toBeNull(); // no flashblocks on Denim: pending is not asked
    expect(status.latestTimestampMs! % 200).toBe(0);
    // The devnet keeps its safe head 10 blocks (2 s of chain time) behind the unsafe head.
    expect(status.safeLag).toMatchObject({ healthy: true, blocks: 10, seconds: 2 });
    expect(status.lines.join('\n')).toMatch(/^lag: ok, unsafe L2 head \d+ is 0\.\d minutes old \(limit 5\)$/m);
    expect(code, stdout).toBe(0);
    const text = await nodeStatus(['--rpc', denim.rpcUrl, '--consensus-rpc', denim.rpcUrl, '--cadence-window-ms', '1000']);
    expect(
      text.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(':')[0]),
    ).toEqual(['execution RPC', 'rule', 'cadence', 'pending', 'lag', 'safe head', 'healthy']);
    expect(text.stdout).toMatch(/^rule: denim \(the latest block carries timestampMs/m);
    expect(text.stdout).toMatch(
      /^cadence: ok, \d+ blocks in 1\.\d s, one every \d+ ms \(target 200 ms; chain time 200 ms per block\), timestampMs on every block$/m,
    );
    expect(text.stdout).toMatch(/^safe head: ok, safe L2 head \d+ is 2 s \(10 blocks\) behind the unsafe head \(limit 30 minutes\)$/m);
    expect(text.code, text.stdout).toBe(0);
  });

  it('safe head stalled: a node whose safe head stops advancing while its unsafe head runs on exits 1 and says where to look', async () => {
    // A peer in front of the devnet's consensus answers that keeps safe_l2 where it was when the
    // peer started (as a node whose L1 derivation stopped would); everything else is the devnet's.
    let frozenSafe: unknown = null;
    const stalledSafe = await proxy(
      () => denim.rpcUrl,
      (method, _params, result) => {
        if (method !== 'optimism_syncStatus') return result;
        const status = result as Record<string, unknown>;
        frozenSafe ??= status.safe_l2;
        return { ...status, safe_l2: frozenSafe, local_safe_l2: frozenSafe };
      },
    );
    await fetch(stalledSafe, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'optimism_syncStatus', params: [] }),
    });
    const limit = ['--max-safe-lag-minutes', '0.05']; // 3 s; the devnet's own safe lag is 2 s
    const healthy = await nodeStatus(['--rpc', denim.rpcUrl, '--consensus-rpc', denim.rpcUrl, '--cadence-window-ms', '0', ...limit]);
    expect(healthy.code, healthy.stdout).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const { code, stdout } = await nodeStatus([
      '--rpc',
      denim.rpcUrl,
      '--consensus-rpc',
      stalledSafe,
      '--cadence-window-ms',
      '1000',
      ...limit,
      '--json',
    ]);
    const status = JSON.parse(stdout) as Status;
    expect(status.cadence.blocks).toBeGreaterThan(0); // the unsafe head still advances
    expect(status.safeLag?.healthy).toBe(false);
    expect(status.safeLag!.seconds).toBeGreaterThan(3);
    expect(status.lines.join('\n')).toMatch(
      /^safe head: FAIL, safe L2 head \d+ is 0\.\d minutes \(\d+ blocks\) behind unsafe head \d+ \(limit 0\.05\): derivation from L1 is not keeping up; check the L1 RPC and beacon endpoints$/m,
    );
    expect(code).toBe(1);
  });

  it('missing timestampMs does not fail: a Base node (8453) whose blocks lack it is judged by its cadence alone', async () => {
    // The devnet's answers with timestampMs taken out of every block, and Base mainnet's chain ID.
    const withoutMillis = await proxy(
      () => denim.rpcUrl,
      (method, _params, result) => {
        if (method === 'eth_chainId') return '0x2105';
        if (method !== 'eth_getBlockByNumber' || !result || typeof result !== 'object') return result;
        const { timestampMs: _dropped, ...block } = result as Record<string, unknown>;
        return block;
      },
    );
    const { code, stdout } = await nodeStatus([
      '--rpc',
      withoutMillis,
      '--consensus-rpc',
      denim.rpcUrl,
      '--cadence-window-ms',
      '1500',
      '--json',
    ]);
    const status = JSON.parse(stdout) as Status;
    expect(status).toMatchObject({ rule: 'denim', chainId: 8453, latestTimestampMs: null });
    expect(status.ruleReason).toContain('chain 8453 is Base');
    expect(status.cadence).toMatchObject({ healthy: true, timestampMs: false, chainIntervalMs: null });
    const text = status.lines.join('\n');
    expect(text).toContain(
      "timestampMs: absent on the latest block (an optional field in Base's docs; judged by the head's cadence alone)",
    );
    expect(text).toMatch(/^cadence: ok, .*timestampMs absent on some blocks \(an optional field in Base's docs\)$/m);
    expect(code, stdout).toBe(0);
  });

  it('a Base node making 1 s blocks fails on cadence: the denim rule still catches a node that is not on Denim', async () => {
    const oldBase = await proxy(
      () => devnet.rpcUrl,
      (method, _params, result) => (method === 'eth_chainId' ? '0x2105' : result),
    );
    const { code, stdout } = await nodeStatus(['--rpc', oldBase, '--json']);
    const status = JSON.parse(stdout) as Status;
    expect(status).toMatchObject({ rule: 'denim', chainId: 8453 });
    expect(status.lines.join('\n')).toMatch(/^cadence: FAIL, (slow|not advancing): /m);
    expect(code).toBe(1);
  });

  it('checkUpstreamLag (ingest/serve at start) on a Denim upstream: judged by lag only, without watching the head', async () => {
    const warnings: string[] = [];
    const logger = {
      warn: (_fields: unknown, message: string) => {
        warnings.push(message);
      },
    } as unknown as Logger;
    const status = await checkUpstreamLag(denim.rpcUrl, logger);
    expect(status).toMatchObject({ exitCode: 0, rule: 'denim', cadence: null, preconfirmations: null, safeLag: null });
    expect(status?.lines.join('\n')).toContain('lag: ok, latest block');
    expect(warnings).toEqual([]);
  });

  it('head stopped: a Denim node whose head stops advancing exits 1 and says so', async () => {
    let frozen: unknown = null;
    const stalled = await proxy(
      () => denim.rpcUrl,
      (method, params, result) => {
        if (method !== 'eth_getBlockByNumber' || params[0] !== 'latest') return result;
        frozen ??= result;
        return frozen;
      },
    );
    const { code, stdout } = await nodeStatus(['--rpc', stalled, '--cadence-window-ms', '800', '--json']);
    const status = JSON.parse(stdout) as Status;
    expect(status.rule).toBe('denim');
    expect(status.cadence).toMatchObject({ healthy: false, blocks: 0 });
    expect(status.lines.join('\n')).toMatch(/^cadence: FAIL, not advancing: the head stayed at block \d+ for 0\.\d s/m);
    expect(code).toBe(1);
  });
});
