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
const HEAD_POLL_MS = 250;
/** The head poll's own round trip and a busy machine's scheduling, on top of its period. */
const POLL_SLACK_MS = 750;
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
  it('no request hangs past its timeout; pending state catches up after SIGCONT and never serves a sealed block past the head poll', async () => {
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
      String(HEAD_POLL_MS),
      '--log-level',
      'info',
    ]);
    const gateway = String((await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000)).url);
    await sleep(4000);
    const rssBefore = rssMiB(run.pid);

    // The watcher: the node's head (while it answers) against the gateway's pre-confirmed block.
    // The gateway learns that a block became canonical from its head poll (--head-poll-ms), so a
    // block the node has just sealed may still be served as pre-confirmed for one poll and its round
    // trip; longer is stale state. After SIGCONT the devnet seals the blocks it owes back to back,
    // so "one block below the head" alone would count that window too: the watcher notes when it
    // first saw the node at or past each number, and judges each pending block by that age. (The
    // node sealed it no later than that, so the age is never overstated.)
    const firstSeenAt = new Map<bigint, number>();
    let nodeHead = -1n;
    let frozen = false;
    const stale: string[] = [];
    let withinPoll = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        if (!frozen) {
          const head = await post(devnet.rpc, 'eth_blockNumber', [], 500);
          if (typeof head.reply?.result === 'string') {
            const seenAt = Date.now();
            for (let n = nodeHead + 1n; n <= BigInt(head.reply.result); n++) firstSeenAt.set(n, seenAt);
            if (BigInt(head.reply.result) > nodeHead) nodeHead = BigInt(head.reply.result);
          }
        }
        const askedAt = Date.now();
        const pending = await post(gateway, 'eth_getBlockByNumber', ['pending', false], RPC_TIMEOUT_MS + 1000);
        const block = pending.reply?.result;
        if (typeof block === 'object' && block?.hash === zeroHash && block.number) {
          const number = BigInt(block.number);
          const sealedAt = firstSeenAt.get(number);
          if (sealedAt !== undefined) {
            const age = askedAt - sealedAt;
            if (age > HEAD_POLL_MS + POLL_SLACK_MS) stale.push(`pending ${number} at node head ${nodeHead}, sealed ${age} ms before`);
            else withinPoll++;
          }
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
      notes: `frozen ${thawedAt - frozenAt} ms; p99 ms ${JSON.stringify(p99)}; answers ${JSON.stringify(answeredWith)}; requests past ${limit} ms: ${hung.length}; pending blocks the node had sealed more than ${HEAD_POLL_MS + POLL_SLACK_MS} ms before: ${stale.length}; sealed within that (the head poll's window): ${withinPoll}`,
    });
    expect(hung, `requests that took longer than ${limit} ms or got no answer`).toEqual([]);
    expect(Number.isFinite(caughtUpMs), 'pending state caught up after SIGCONT').toBe(true);
    expect(stale, 'moments the gateway served as pre-confirmed a block the node had sealed more than a head poll before').toEqual([]);
    // While frozen, forwarded reads failed fast with a server error rather than hanging.
    expect(answeredWith['eth_blockNumber -32000'] ?? 0, 'forwarded reads answered -32000 during the freeze').toBeGreaterThan(0);
    expect(answeredWith['eth_getBlockByNumber result'] ?? 0).toBeGreaterThan(0);
  }, 150_000);
});
