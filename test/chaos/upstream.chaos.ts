import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { managed, percentile, report, rssMiB, sleep, startDevnet, stopAll } from './harness.ts';

/**
 * Scenario 4: the upstream frozen. `flashlog devnet --load` is the upstream node (and the feed);
 * `flashlog run` (ingest + view + gateway, embedded log) reads it. The devnet gets SIGSTOP for
 * 10 s, then SIGCONT. Throughout, clients query the gateway (view reads and forwarded reads) and a
 * watcher compares the gateway's pending block with the node's head.
 */
const RPC_TIMEOUT_MS = 2000;
const CALL_TIMEOUT_MS = 3000;
const FREEZE_MS = 10_000;
const zeroHash = `0x${'0'.repeat(64)}`;

afterAll(stopAll);

type Reply = { result?: { number?: string; hash?: string } | string; error?: { code: number; message: string } };
async function post(
  url: string,
  method: string,
  params: unknown[],
  timeoutMs: number,
): Promise<{ reply?: Reply; ms: number; failure?: string }> {
  const started = Date.now();
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { reply: (await response.json()) as Reply, ms: Date.now() - started };
  } catch (error) {
    return { ms: Date.now() - started, failure: String(error) };
  }
}

describe('scenario 4: the upstream RPC frozen (SIGSTOP) for 10 s', () => {
  it('no request hangs past its timeout; pending state catches up after SIGCONT and is never behind the node head', async () => {
    const dir = tempDir('flashlog-chaos-upstream-');
    const devnet = await startDevnet(['--load', '20', '--metadata-receipts']);
    const run = managed([
      'run',
      '--ws',
      devnet.ws,
      '--rpc',
      devnet.rpc,
      '--executor',
      'metadata',
      '--data-dir',
      dir.path,
      '--port',
      '0',
      '--metrics-port',
      '0',
      '--rpc-timeout-ms',
      String(RPC_TIMEOUT_MS),
      '--call-timeout-ms',
      String(CALL_TIMEOUT_MS),
      '--head-poll-ms',
      '250',
      '--log-level',
      'info',
    ]);
    const gateway = String((await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    await sleep(4000);
    const rssBefore = rssMiB(run.pid);

    // The watcher: the node's head (while it answers) against the gateway's pre-confirmed block.
    let nodeHead = 0n;
    let frozen = false;
    const behind: string[] = [];
    let justSealed = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        if (!frozen) {
          const head = await post(devnet.rpc, 'eth_blockNumber', [], 500);
          if (typeof head.reply?.result === 'string') nodeHead = BigInt(head.reply.result);
        }
        const pending = await post(gateway, 'eth_getBlockByNumber', ['pending', false], RPC_TIMEOUT_MS + 1000);
        const block = pending.reply?.result;
        // The block the node has just sealed may still be served as pre-confirmed until the
        // gateway's next head poll (--head-poll-ms): equal is that window, below is stale state.
        if (typeof block === 'object' && block?.hash === zeroHash && block.number) {
          if (BigInt(block.number) < nodeHead) behind.push(`pending ${BigInt(block.number)} at node head ${nodeHead}`);
          else if (BigInt(block.number) === nodeHead) justSealed++;
        }
        await sleep(100);
      }
    })();

    // Clients: view reads and forwarded reads, each with a client-side limit well past the gateway's.
    const latencies: Record<string, number[]> = {};
    const hung: string[] = [];
    const answeredWith: Record<string, number> = {};
    let querying = true;
    const queries: [string, unknown[]][] = [
      ['eth_getBlockByNumber', ['pending', false]],
      ['eth_blockNumber', []],
      ['eth_getBalance', ['0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', 'latest']],
      ['eth_call', [{ to: '0x4200000000000000000000000000000000000015', data: '0x5cf24969' }, 'pending']],
    ];
    const limit = Math.max(RPC_TIMEOUT_MS, CALL_TIMEOUT_MS) + 1500;
    const clients = queries.map(async ([method, params]) => {
      while (querying) {
        const outcome = await post(gateway, method, params, limit + 5000);
        (latencies[method] ??= []).push(outcome.ms);
        if (outcome.failure || outcome.ms > limit) hung.push(`${method} ${outcome.ms} ms ${outcome.failure ?? ''}`);
        const code = outcome.reply?.error?.code ?? 0;
        answeredWith[`${method} ${code === 0 ? 'result' : code}`] = (answeredWith[`${method} ${code === 0 ? 'result' : code}`] ?? 0) + 1;
        await sleep(50);
      }
    });

    await sleep(2000);
    frozen = true;
    devnet.proc.freeze();
    const frozenAt = Date.now();
    await sleep(FREEZE_MS);
    devnet.proc.thaw();
    frozen = false;
    const thawedAt = Date.now();
    // Catch-up: the gateway's pre-confirmed block is above the node's head again.
    let caughtUpMs = Number.NaN;
    while (Date.now() - thawedAt < 30_000) {
      const head = await post(devnet.rpc, 'eth_blockNumber', [], 1000);
      const pending = await post(gateway, 'eth_getBlockByNumber', ['pending', false], 3000);
      const block = pending.reply?.result;
      if (
        typeof head.reply?.result === 'string' &&
        typeof block === 'object' &&
        block?.hash === zeroHash &&
        BigInt(block.number!) > BigInt(head.reply.result)
      ) {
        caughtUpMs = Date.now() - thawedAt;
        break;
      }
      await sleep(100);
    }
    await sleep(3000);
    querying = false;
    watching = false;
    await Promise.all([...clients, watcher]);
    const rssAfter = rssMiB(run.pid);
    expect(run.current.child.exitCode, 'flashlog run kept running').toBeNull();
    await run.stop();
    dir.remove();

    const p99 = Object.fromEntries(Object.entries(latencies).map(([method, values]) => [method, percentile(values, 99)]));
    report({
      scenario: '4 upstream frozen',
      load: `devnet --load 20; 4 clients (${Object.values(latencies).flat().length} requests)`,
      faults: `node SIGSTOP ${FREEZE_MS / 1000} s (RPC and feed), then SIGCONT`,
      lost: 'n/a (reader)',
      duplicates: 'n/a (reader)',
      recoveryMs: `pending above the node again ${caughtUpMs} ms after SIGCONT`,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssAfter,
      notes: `frozen ${thawedAt - frozenAt} ms; p99 ms ${JSON.stringify(p99)}; answers ${JSON.stringify(answeredWith)}; requests past ${limit} ms: ${hung.length}; samples with pending behind the node: ${behind.length}; samples with pending = the block just sealed (within the head poll): ${justSealed}`,
    });
    expect(hung, `requests that took longer than ${limit} ms or got no answer`).toEqual([]);
    expect(Number.isFinite(caughtUpMs), 'pending state caught up after SIGCONT').toBe(true);
    expect(behind, 'moments the gateway served a pre-confirmed block below the node head').toEqual([]);
    // While frozen, forwarded reads failed fast with a server error rather than hanging.
    expect(answeredWith['eth_blockNumber -32000'] ?? 0, 'forwarded reads answered -32000 during the freeze').toBeGreaterThan(0);
    expect(answeredWith['eth_getBlockByNumber result'] ?? 0).toBeGreaterThan(0);
  }, 150_000);
});
