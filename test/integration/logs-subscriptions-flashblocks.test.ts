import { afterAll, describe, expect, it } from 'vitest';
import { keccak256, type Hex } from 'viem';
import WebSocket from 'ws';
import { createServe, type Serve } from '../../streams/serve.ts';
import { eventually, testContext } from '../helpers/context.ts';
import { subscribe } from '../helpers/devnet-feed.ts';
import { startFlashlog, type FlashlogUnderTest } from '../helpers/execution-harness.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * Issue 14, on the flashblocks source: a `logs` subscriber and a `pendingLogs` subscriber on one
 * gateway, all real (the devnet's feed under load, local execution, reconciliation, the view).
 * Over a run of whole canonical blocks, each subscriber sees every log of every block once and in
 * order: `logs` exactly the node's canonical logs (eth_getLogs on the devnet), `pendingLogs` those
 * of the transactions the devnet pre-confirmed, as each block's flashblocks brought them. No reorg here: gateway-reorg-devnet covers
 * the removed: true copies.
 *
 * The devnet runs as its own process, as a node does beside flashlog: in one process its EVM and
 * the local executor's would share one thread, and on a loaded machine the executor's reads of
 * the node's state wait behind the devnet's block building, so every pre-confirmation arrives
 * after its block is canonical. Blocks are 2 s with 10 flashblocks at 10 tx/s, which leaves
 * the executor room on a loaded CI machine; the bound below stays what it was.
 */
interface Log {
  transactionHash: string;
  blockNumber: string;
  logIndex: string;
  address: string;
  data: string;
  topics: string[];
  removed?: boolean;
}

let devnet: FlashlogProcess | undefined;
let feed: Awaited<ReturnType<typeof subscribe>> | undefined;
let flashlog: FlashlogUnderTest | undefined;
let serve: Serve | undefined;
let socket: WebSocket | undefined;
afterAll(async () => {
  socket?.close();
  await serve?.close();
  await flashlog?.stop().catch(() => undefined);
  feed?.close();
  await devnet?.stop();
}, 30_000);

const key = (log: Log): string => `${BigInt(log.blockNumber)}/${BigInt(log.logIndex)}/${log.transactionHash.toLowerCase()}`;
const content = (log: Log) => ({ key: key(log), address: log.address.toLowerCase(), data: log.data, topics: log.topics });

describe('logs and pendingLogs on a flashblocks chain', () => {
  it("each sees every log of every block once and in order; logs equals the node's canonical logs", async () => {
    devnet = spawnFlashlog([
      'devnet',
      ...['--devnet-port', '0', '--devnet-ws-port', '0', '--metrics-port', '0'],
      ...['--block-time-ms', '2000', '--flashblock-ms', '200', '--load', '10'],
    ]);
    const started = await devnet.waitFor((line) => line.msg === 'devnet started', 30_000);
    const rpcUrl = String(started.rpc);
    const wsUrl = String(started.ws);
    // Every transaction the devnet pre-confirmed (in a flashblock it sent, as this test's own feed
    // client saw it); a block's seal may add transactions that came after its last flashblock,
    // which nobody pre-confirmed.
    feed = await subscribe(wsUrl);
    const ctx = testContext({ rpc: rpcUrl, executor: 'local', canonicalPollMs: 100, port: 0, headPollMs: 100 });
    flashlog = await startFlashlog(ctx, { wsUrl, rpcUrl });
    serve = await createServe(ctx, { log: flashlog.log, rpcUrl });

    const received: Record<'logs' | 'pendingLogs', Log[]> = { logs: [], pendingLogs: [] };
    const kindOf = new Map<string, 'logs' | 'pendingLogs'>();
    socket = new WebSocket(serve.gateway.wsUrl);
    await new Promise((resolve, reject) => {
      socket!.once('open', resolve);
      socket!.once('error', reject);
    });
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as {
        id?: number;
        result?: string;
        method?: string;
        params?: { subscription: string; result: Log };
      };
      if (message.id !== undefined && typeof message.result === 'string')
        kindOf.set(message.result, message.id === 1 ? 'logs' : 'pendingLogs');
      if (message.method === 'eth_subscription' && message.params) {
        const kind = kindOf.get(message.params.subscription);
        if (kind) received[kind].push(message.params.result);
      }
    });
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['logs'] }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['pendingLogs'] }));
    await eventually(() => (kindOf.size === 2 ? true : undefined), 5000, 'both subscriptions');

    // Six canonical blocks with logs announced on `logs` after the subscriptions started.
    const blocksWithLogs = () => new Set(received.logs.map((log) => BigInt(log.blockNumber)));
    await eventually(
      () => (blocksWithLogs().size >= 7 ? true : undefined),
      60_000,
      'seven canonical blocks with logs on the logs subscription',
    );
    const announced = [...blocksWithLogs()].sort((a, b) => (a < b ? -1 : 1));
    // The first block may have been announced only in part of its pre-confirmation; judge the whole
    // blocks after it, up to the last one fully announced.
    const from = announced[1]!;
    const to = announced[announced.length - 2]!;
    expect(to - from, 'a run of whole blocks').toBeGreaterThanOrEqual(3n);

    const canonical = (await (
      await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getLogs',
          params: [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` }],
        }),
      })
    ).json()) as { result: Log[] };
    expect(canonical.result.length, 'the node has logs in the range').toBeGreaterThan(0);
    const inRange = (log: Log) => BigInt(log.blockNumber) >= from && BigInt(log.blockNumber) <= to;

    // logs: exactly the canonical logs, once each, in the node's order, none removed.
    const logs = received.logs.filter(inRange);
    expect(logs.every((log) => log.removed !== true)).toBe(true);
    expect(logs.map(content), `logs subscription, blocks ${from}..${to}`).toEqual(canonical.result.map(content));

    // pendingLogs: per block, the logs of its pre-confirmed transactions in the canonical order,
    // once each, nothing withdrawn without a reorg and nothing the block does not hold. A
    // flashblock that arrives once its block is already canonical is stale (Base's rule, counted
    // in flashlog_ingest_rejected_total{reason="stale"}): on a loaded machine a block's last
    // flashblock can be, so each block's pre-confirmed logs are a prefix of its canonical ones,
    // and the rest of them reach `logs` (checked above).
    const pending = received.pendingLogs.filter(inRange);
    expect(
      pending.filter((log) => log.removed === true),
      'nothing withdrawn without a reorg',
    ).toEqual([]);
    const preconfirmed = new Set<string>(
      feed.frames.flatMap((frame) => frame.flashblock.diff.transactions.map((tx) => keccak256(tx as Hex))),
    );
    const canonicalPreconfirmed = canonical.result.filter((log) => preconfirmed.has(log.transactionHash.toLowerCase()));
    for (let block = from; block <= to; block++) {
      const ours = pending.filter((log) => BigInt(log.blockNumber) === block).map(content);
      const theirs = canonicalPreconfirmed.filter((log) => BigInt(log.blockNumber) === block).map(content);
      expect(ours, `pendingLogs of block ${block}: a prefix of its canonical logs`).toEqual(theirs.slice(0, ours.length));
    }
    expect(pending.length, 'pre-confirmed logs delivered').toBeGreaterThan(canonicalPreconfirmed.length / 2);
  }, 120_000);
});
