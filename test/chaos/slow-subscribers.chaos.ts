import { keccak256, type Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { tempDir } from '../helpers/context.ts';
import { managed, percentile, recordFeed, report, rssMiB, sleep, startDevnet, stopAll } from './harness.ts';

/**
 * Scenario 7: 1,000 WebSocket subscribers that never read. `flashlog run` (ingest + view +
 * gateway) on the devnet under load; one well-behaved pendingLogs subscriber measures its
 * notification latency (feed arrival of the flashblock holding the transaction -> the log's
 * notification, both timed in this process) alone, then while 1,000 connections subscribe and
 * stop reading (their sockets paused). Each must be disconnected once its unsent data passes
 * --max-buffered-bytes, and the good subscriber's p99 must stay within 2x its p99 alone.
 */
const BASELINE_MS = 15_000;
const WITH_MS = Number(process.env.CHAOS_SLOW_WITH_MS ?? 40_000);
const NON_READERS = 1000;
/** What the non-readers subscribe to. */
const KIND = process.env.CHAOS_SLOW_KIND ?? 'pendingLogs';
const BUFFER_LIMIT = 64 * 1024;
const LOAD = process.env.CHAOS_SLOW_LOAD ?? '50';
/** Absolute slack on the bound: this 2-core machine is shared and noisy. */
const SLACK_MS = 10;
/** A well-behaved subscriber's p99 with the non-readers, at most this many times its p99 alone. */
const TARGET_RATIO = 2;

afterAll(stopAll);

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `) || candidate.startsWith(`${name}{`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('scenario 7: 1,000 WebSocket subscribers that never read', () => {
  it('each is disconnected when its buffer fills; a well-behaved subscriber keeps its p99 within 2x', async () => {
    const dir = tempDir('flashlog-chaos-slow-');
    const devnet = await startDevnet(['--load', LOAD, '--metadata-receipts']);
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
      '--max-buffered-bytes',
      String(BUFFER_LIMIT),
      '--log-level',
      'info',
    ]);
    const metricsUrl = String((await run.current.waitFor((line) => line.msg === 'metrics listening', 60_000)).url);
    const wsUrl = String((await run.current.waitFor((line) => line.msg === 'gateway listening', 60_000)).ws);
    const feed = await recordFeed(devnet.ws);

    // The well-behaved subscriber.
    const arrivalByTx = new Map<string, number>();
    const feedArrival = (hash: string): number | undefined => {
      if (!arrivalByTx.has(hash)) {
        for (const [key, raws] of feed.transactions) {
          for (const raw of raws) arrivalByTx.set(keccak256(raw as Hex), feed.arrivedAt.get(key)!);
        }
        feed.transactions.clear();
      }
      return arrivalByTx.get(hash);
    };
    const latencies: { at: number; ms: number }[] = [];
    const good = new WebSocket(wsUrl);
    await new Promise<void>((resolve, reject) => {
      good.once('open', () => resolve());
      good.once('error', reject);
    });
    good.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['pendingLogs'] }));
    good.on('message', (data: Buffer) => {
      const now = Date.now();
      const message = JSON.parse(data.toString()) as { params?: { result?: { transactionHash?: string; removed?: boolean } } };
      const log = message.params?.result;
      if (!log?.transactionHash || log.removed) return;
      const sent = feedArrival(log.transactionHash);
      if (sent !== undefined) latencies.push({ at: now, ms: now - sent });
    });
    await sleep(3000);
    const rssBefore = rssMiB(run.pid);
    const baselineFrom = Date.now();
    await sleep(BASELINE_MS);
    const withFrom = Date.now();

    // 1,000 connections that subscribe and then never read: their sockets are paused once the
    // subscription is confirmed.
    const openedAt = Date.now();
    const nonReaders: WebSocket[] = [];
    let closedSeen = 0;
    let subscribed = 0;
    let allSubscribedAt = Number.NaN;
    for (let i = 0; i < NON_READERS; i++) {
      const socket = new WebSocket(wsUrl);
      nonReaders.push(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        closedSeen++;
      });
      socket.once('open', () => {
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: [KIND] }));
        socket.once('message', () => {
          (socket as unknown as { _socket: { pause(): void } })._socket.pause();
          if (++subscribed === NON_READERS) allSubscribedAt = Date.now();
        });
      });
      if (i % 100 === 99) await sleep(20);
    }
    let allDroppedMs = Number.NaN;
    const deadline = Date.now() + WITH_MS;
    while (Date.now() < deadline) {
      await sleep(500);
      if (Number.isNaN(allDroppedMs) && (await metric(metricsUrl, 'flashlog_ws_slow_disconnects_total')) >= NON_READERS)
        allDroppedMs = Date.now() - openedAt;
    }
    const withTo = Date.now();
    const dropped = await metric(metricsUrl, 'flashlog_ws_slow_disconnects_total');
    const connectionsLeft = await metric(metricsUrl, 'flashlog_ws_connections');
    const rssAfter = rssMiB(run.pid);
    const alive = run.current.child.exitCode === null;
    for (const socket of nonReaders) socket.terminate();
    good.terminate();
    feed.close();
    await run.stop();
    dir.remove();

    const alone = latencies.filter((sample) => sample.at >= baselineFrom && sample.at < withFrom).map((sample) => sample.ms);
    const withThem = latencies.filter((sample) => sample.at >= withFrom && sample.at < withTo).map((sample) => sample.ms);
    const p99Alone = percentile(alone, 99);
    const p99With = percentile(withThem, 99);
    // The same window without the connection storm (the 1,000 handshakes and subscriptions, and a second after).
    const settled = latencies.filter((sample) => sample.at >= allSubscribedAt + 1000 && sample.at < withTo).map((sample) => sample.ms);
    const p99Settled = percentile(settled, 99);
    report({
      scenario: '7 slow subscribers',
      load: `devnet --load ${LOAD}; 1 good pendingLogs subscriber (${alone.length} notifications alone, ${withThem.length} with the others)`,
      faults: `${NON_READERS} ${KIND} subscribers that never read; --max-buffered-bytes ${BUFFER_LIMIT}`,
      lost: 'n/a',
      duplicates: 'n/a',
      recoveryMs: `all ${NON_READERS} dropped ${allDroppedMs} ms after they connected`,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: rssAfter,
      notes: `good subscriber p99 ${p99Alone} ms alone, ${p99With} ms with them (${(p99With / p99Alone).toFixed(2)}x, target ${TARGET_RATIO}x; p50 ${percentile(alone, 50)} / ${percentile(withThem, 50)} ms); after the ${allSubscribedAt - openedAt} ms connection storm and 1 s: p99 ${p99Settled} ms (${(p99Settled / p99Alone).toFixed(2)}x, ${settled.length} notifications); ${dropped} slow disconnects; ${connectionsLeft} connections left`,
    });
    expect(alive, 'flashlog run stayed up').toBe(true);
    expect(alone.length, 'notifications measured alone').toBeGreaterThan(50);
    expect(withThem.length, 'notifications measured with the non-readers').toBeGreaterThan(50);
    expect(dropped, 'non-readers disconnected for a full buffer').toBeGreaterThanOrEqual(NON_READERS);
    expect(connectionsLeft, 'only the good subscriber is left').toBeLessThanOrEqual(1);
    expect(p99With, `p99 with ${NON_READERS} non-readers vs alone (${p99Alone} ms)`).toBeLessThanOrEqual(
      TARGET_RATIO * p99Alone + SLACK_MS,
    );
  }, 180_000);
});
