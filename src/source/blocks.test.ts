import { Writable } from 'node:stream';
import { Subject, firstValueFrom, tap, toArray } from 'rxjs';
import { keccak256, toHex, type Hex } from 'viem';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LoggedBlock } from '../chain/resume.ts';
import { ConfigError, ServerError } from '../errors.ts';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry, type Registry } from '../obs/metrics.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import { createBlocksSource } from './blocks.ts';
import type { SourceEvent } from './port.ts';
import { transferReceipt } from '../../test/helpers/rpc-receipt.ts';

/**
 * The blocks source's handling of bad input and outages, with a scripted node (a fake upstream:
 * this is a unit test of the adapter; the real node is in test/integration/blocks-source-devnet).
 */
const ZERO32 = `0x${'0'.repeat(64)}`;
const hashOf = (label: string) => keccak256(toHex(label));
const ADDRESS = '0x00000000000000000000000000000000000000aa';

function block(n: number, fork: string, parentFork: string, txs: Hex[] = []) {
  return {
    number: toHex(n),
    hash: hashOf(`${fork}${n}`),
    parentHash: n === 0 ? ZERO32 : hashOf(`${parentFork}${n - 1}`),
    timestamp: toHex(1000 + n),
    miner: ADDRESS,
    mixHash: ZERO32,
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    extraData: '0x',
    baseFeePerGas: '0x1',
    receiptsRoot: ZERO32,
    stateRoot: ZERO32,
    logsBloom: `0x${'0'.repeat(512)}`,
    transactions: txs.map((hash) => ({ hash, type: '0x2', from: ADDRESS, to: ADDRESS, input: '0x' })),
  };
}
function receipt(blockHash: string, n: number, tx: Hex) {
  const at = { transactionIndex: '0x0', transactionHash: tx, blockHash, blockNumber: toHex(n) };
  return transferReceipt({
    ...at,
    from: ADDRESS,
    to: ADDRESS,
    logs: [{ address: ADDRESS, topics: [], data: '0x', logIndex: '0x0', ...at }],
  });
}

/** A node whose chain, availability and receipts the test changes as it goes. */
function scriptedNode() {
  const blocks = new Map<string, ReturnType<typeof block>>();
  const script = { head: '' as string, down: false, badReceipts: new Set<string>(), refused: 0, badServed: 0 };
  const add = (b: ReturnType<typeof block>) => blocks.set(b.hash, b);
  const upstream: Upstream = {
    url: 'scripted',
    async call(method, params) {
      if (script.down) script.refused += 1;
      if (script.down) throw new ServerError('upstream RPC unreachable: connect ECONNREFUSED', { retryable: true });
      if (method === 'eth_getBlockByNumber' && params[0] !== 'latest') {
        // By number: the block at that height on the chain that ends at the head.
        let cursor = blocks.get(script.head);
        while (cursor && BigInt(cursor.number) > BigInt(String(params[0]))) cursor = blocks.get(cursor.parentHash);
        return cursor && cursor.number === params[0] ? cursor : null;
      }
      if (method === 'eth_getBlockByNumber') return blocks.get(script.head) ?? null;
      if (method === 'eth_getBlockByHash') return blocks.get(String(params[0])) ?? null;
      if (method === 'eth_getBlockReceipts') {
        const b = blocks.get(String(params[0]));
        if (!b) return null;
        if (script.badReceipts.has(b.hash)) script.badServed += 1;
        return script.badReceipts.has(b.hash) ? [] : b.transactions.map((tx) => receipt(b.hash, Number(b.number), tx.hash));
      }
      if (method === 'eth_getRawTransactionByHash') return '0x02c0';
      throw new Error(`unexpected ${method}`);
    },
  };
  return { upstream, script, add };
}

function start(
  node: ReturnType<typeof scriptedNode>,
  maxHeld = 64,
  extra: { resume?: LoggedBlock[]; verifyChain?: () => Promise<void>; maxWalkBlocks?: number } = {},
) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const metrics = createMetricsRegistry({ defaults: false });
  const stop$ = new Subject<void>();
  const source = createBlocksSource({
    rpc: node.upstream,
    pollMs: 5,
    maxHeld,
    maxWalkBlocks: extra.maxWalkBlocks ?? 100,
    resume: extra.resume,
    verifyChain: extra.verifyChain,
    stop$,
    metrics,
    ws: { pingIntervalMs: 500, reconnectMinMs: 100, reconnectMaxMs: 100 },
    logger: createLogger({ level: 'info', name: 'test', destination: destination as never }),
  });
  const seen: SourceEvent[] = [];
  const events = firstValueFrom(
    source.events$.pipe(
      tap((event) => seen.push(event)),
      toArray(),
    ),
  );
  let settled = false;
  events.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { events, seen, stop: () => stop$.next(), lines, metrics, settled: () => settled };
}

// Fake time: the source's polls (every 5 ms) run on the clock `until` moves, not the wall's.
beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});
/** Moves fake time on one poll (5 ms) at a time until `condition` holds, at most 10 s of it. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let elapsedMs = 0; !(await condition()); elapsedMs += 5) {
    if (elapsedMs >= 10_000) throw new Error('condition not met within 10 s of polling');
    await vi.advanceTimersByTimeAsync(5);
  }
}
const headHeld = (run: ReturnType<typeof start>, n: number) => async () => {
  const data = await run.metrics.getSingleMetric('flashlog_blocks_source_head')!.get();
  return (data.values[0]?.value ?? 0) >= n;
};
/** A node with chain `a` from block `from` to `to`, and the source started on it, once it holds its head `a<head>`. */
async function startedAt(from: number, to: number, head: number) {
  const node = scriptedNode();
  for (let n = from; n <= to; n++) node.add(block(n, 'a', 'a'));
  node.script.head = hashOf(`a${head}`);
  const run = start(node);
  await until(headHeld(run, head));
  return { node, run };
}
async function problems(metrics: Registry, reason: string): Promise<number> {
  const data = await metrics.getSingleMetric('flashlog_blocks_source_problems_total')!.get();
  return data.values.filter((sample) => sample.labels.reason === reason).reduce((sum, sample) => sum + sample.value, 0);
}
const grown = (events: SourceEvent[]) => events.flatMap((event) => (event.type === 'grew' ? [Number(event.block.blockNumber)] : []));

describe('blocks source: the first head read', () => {
  it('replaced at once by the node (a devnet reorg right after the start): a reorg, no warning of one too deep', async () => {
    // A fresh start on a node at a5 holds a5 alone; the node then replaces a5 by b5 (same parent a4).
    const { node, run } = await startedAt(0, 5, 5);
    node.add(block(5, 'b', 'a'));
    node.add(block(6, 'b', 'b'));
    node.script.head = hashOf('b5');
    const reorgCount = async () => (await run.metrics.getSingleMetric('flashlog_blocks_source_reorgs_total')!.get()).values[0]?.value ?? 0;
    await until(async () => (await reorgCount()) + (await problems(run.metrics, 'reorg_too_deep')) >= 1);
    node.script.head = hashOf('b6');
    await until(headHeld(run, 6));
    run.stop();
    const events = await run.events;
    expect(await problems(run.metrics, 'reorg_too_deep')).toBe(0);
    expect(run.lines.filter((line) => line.level === 40 && String(line.msg).includes('no common ancestor'))).toEqual([]);
    expect(events.flatMap((event) => (event.type === 'replaced' ? [[event.replacedHash, event.byHash]] : []))).toEqual([
      [hashOf('a5'), hashOf('b5')],
    ]);
    expect(grown(events)).toEqual([5, 5, 6]);
  });
});

describe('blocks source: bad input and outages', () => {
  it('a node that stops answering: one log line, a metric, and every block after it comes back', async () => {
    const { node, run } = await startedAt(0, 12, 2);
    node.script.down = true;
    node.script.head = hashOf('a10');
    await until(() => node.script.refused >= 3);
    node.script.down = false;
    await until(headHeld(run, 10));
    node.script.head = hashOf('a12');
    await until(headHeld(run, 12));
    run.stop();
    expect(grown(await run.events)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(await problems(run.metrics, 'node_unavailable')).toBeGreaterThan(1);
    expect(run.lines.filter((line) => String(line.msg).startsWith('blocks source: could not read')).length).toBe(1);
  });

  it('receipts that do not match the transactions: a metric, and the block once they do', async () => {
    const node = scriptedNode();
    node.add(block(1, 'a', 'a'));
    const bad = block(2, 'a', 'a', [hashOf('tx')]);
    node.add(bad);
    node.script.head = hashOf('a1');
    node.script.badReceipts.add(bad.hash);
    const run = start(node);
    await until(headHeld(run, 1));
    node.script.head = bad.hash;
    await until(() => node.script.badServed >= 2);
    node.script.badReceipts.clear();
    await until(headHeld(run, 2));
    run.stop();
    const events = await run.events;
    expect(grown(events)).toEqual([1, 2]);
    expect(await problems(run.metrics, 'receipts_mismatch')).toBeGreaterThan(0);
    const two = events.find((event) => event.type === 'grew' && event.block.blockNumber === 2n);
    expect(two?.type === 'grew' && two.receipts?.length).toBe(1);
  });

  it('a block whose parent the node does not know: a metric, nothing published until it does', async () => {
    const { node, run } = await startedAt(1, 3, 3);
    const orphan = block(5, 'a', 'a');
    node.add(orphan);
    node.script.head = orphan.hash;
    await until(async () => (await problems(run.metrics, 'unknown_parent')) >= 2);
    node.add(block(4, 'a', 'a'));
    await until(headHeld(run, 5));
    run.stop();
    expect(grown(await run.events)).toEqual([3, 4, 5]);
    expect(await problems(run.metrics, 'unknown_parent')).toBeGreaterThan(0);
  });

  it('a reorg, and a reorg deeper than the window (every block held withdrawn, with a metric)', async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 8; n++) node.add(block(n, 'a', 'a'));
    node.script.head = hashOf('a1');
    const run = start(node, 4);
    for (let n = 2; n <= 8; n++) {
      node.script.head = hashOf(`a${n}`);
      await until(headHeld(run, n));
    }
    // Fork b from 7: a7, a8 replaced.
    node.add(block(7, 'b', 'a'));
    node.add(block(8, 'b', 'b'));
    node.add(block(9, 'b', 'b'));
    node.script.head = hashOf('b9');
    await until(headHeld(run, 9));
    // Fork c from 2: below the 4 blocks held.
    for (let n = 3; n <= 10; n++) node.add(block(n, 'c', n === 3 ? 'a' : 'c'));
    node.script.head = hashOf('c10');
    await until(headHeld(run, 10));
    run.stop();
    const events = await run.events;
    const replaced = events.flatMap((event) => (event.type === 'replaced' ? [event.replacedHash] : []));
    // The deep one: the 4 blocks held (a6, b7, b8, b9) are withdrawn, so `pending` is never a block
    // the node no longer has; the walk's blocks (c6..c10) follow.
    expect(replaced).toEqual([hashOf('a7'), hashOf('a8'), hashOf('a6'), hashOf('b7'), hashOf('b8'), hashOf('b9')]);
    const removed = events.flatMap((event) => (event.type === 'replaced' ? event.removedLogs : []));
    expect(removed).toEqual([]);
    expect(await problems(run.metrics, 'reorg_too_deep')).toBe(1);
    expect(grown(events).slice(-5)).toEqual([6, 7, 8, 9, 10]);
  });
});

/** What the log holds of block `n` of fork `fork` (as src/log/log-tail.ts reads it back). */
const logged = (n: number, fork = 'a'): LoggedBlock => ({ number: BigInt(n), hash: hashOf(`${fork}${n}`), transactions: [], logs: [] });
const gapsOf = (events: SourceEvent[]) =>
  events.flatMap((event) => (event.type === 'gap' ? [[Number(event.from), Number(event.to), event.reason]] : []));

describe('blocks source: a restart resumes where the log ends', () => {
  it('starts from the last block the log holds and backfills to the head: 0 missing, none twice', async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 30; n++) node.add(block(n, 'a', 'a'));
    node.script.head = hashOf('a30');
    // The log ends at 20 (the process was killed there); the node is at 30.
    const run = start(node, 64, { resume: [logged(20), logged(19), logged(18)] });
    await until(headHeld(run, 30));
    run.stop();
    const events = await run.events;
    expect(grown(events)).toEqual([21, 22, 23, 24, 25, 26, 27, 28, 29, 30]);
    expect(gapsOf(events)).toEqual([]);
    expect(events.filter((event) => event.type === 'replaced')).toEqual([]);
  });

  it('more missing than --max-backfill-blocks: the newest are read, the rest is one gap record', async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 40; n++) node.add(block(n, 'a', 'a'));
    node.script.head = hashOf('a40');
    const run = start(node, 64, { resume: [logged(10)], maxWalkBlocks: 5 });
    await until(headHeld(run, 40));
    run.stop();
    const events = await run.events;
    expect(gapsOf(events)).toEqual([[11, 35, 'beyond_max_backfill']]);
    expect(grown(events)).toEqual([36, 37, 38, 39, 40]);
    expect(events.findIndex((event) => event.type === 'gap')).toBeLessThan(events.findIndex((event) => event.type === 'grew'));
  });

  it('the log ends on blocks the node replaced while the process was down: they are withdrawn, the rest backfilled', async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 20; n++) node.add(block(n, 'a', 'a'));
    node.add(block(19, 'b', 'a'));
    for (let n = 20; n <= 25; n++) node.add(block(n, 'b', 'b'));
    node.script.head = hashOf('b25');
    // The log holds a18, a19, a20; the node has a18 but replaced 19 and 20.
    const run = start(node, 64, { resume: [logged(20), logged(19), logged(18)] });
    await until(headHeld(run, 25));
    run.stop();
    const events = await run.events;
    expect(events.flatMap((event) => (event.type === 'replaced' ? [event.replacedHash] : []))).toEqual([hashOf('a20'), hashOf('a19')]);
    expect(grown(events)).toEqual([19, 20, 21, 22, 23, 24, 25]);
    expect(gapsOf(events)).toEqual([]);
  });
});

describe('blocks source: the chain is checked all the time', () => {
  it("a node restarted as another chain (its head goes backwards): the source stops with the check's error, nothing of it published", async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 12; n++) node.add(block(n, 'a', 'a'));
    node.script.head = hashOf('a12');
    let genesis = 'a';
    const verifyChain = async () => {
      if (genesis !== 'a') throw new ConfigError('the log holds chain id 1337, genesis A, but the node is chain id 1337, genesis B');
    };
    const run = start(node, 64, { verifyChain, resume: [logged(10)] });
    await until(headHeld(run, 12));
    // The devnet restarts as chain z: block 3 of a new genesis.
    for (let n = 1; n <= 3; n++) node.add(block(n, 'z', 'z'));
    genesis = 'z';
    node.script.head = hashOf('z3');
    await until(run.settled);
    await expect(run.events).rejects.toThrow(/genesis A, but the node is chain id 1337, genesis B/);
    expect(grown(run.seen)).toEqual([11, 12]);
    expect(run.seen.filter((event) => event.type === 'replaced')).toEqual([]);
  });

  it("another chain whose head is above the log's: stopped before the walk gives up and anything is held", async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 6; n++) node.add(block(n, 'a', 'a'));
    node.script.head = hashOf('a6');
    let genesis = 'a';
    const verifyChain = async () => {
      if (genesis !== 'a') throw new ConfigError('another chain');
    };
    const run = start(node, 4, { verifyChain, maxWalkBlocks: 20 });
    await until(headHeld(run, 6));
    for (let n = 1; n <= 30; n++) node.add(block(n, 'z', 'z'));
    genesis = 'z';
    node.script.head = hashOf('z30');
    await until(run.settled);
    await expect(run.events).rejects.toThrow(/another chain/);
    expect(grown(run.seen)).toEqual([6]);
  });

  it('the first block held replaced before a window is held: withdrawn, and no warning', async () => {
    const node = scriptedNode();
    for (let n = 1; n <= 5; n++) node.add(block(n, 'a', 'a'));
    node.script.head = hashOf('a5');
    const run = start(node);
    await until(headHeld(run, 5));
    node.add(block(5, 'b', 'a'));
    node.add(block(6, 'b', 'b'));
    // a4 is below the one block held: the walk from b6 reaches below the window.
    node.script.head = hashOf('b6');
    await until(headHeld(run, 6));
    run.stop();
    const events = await run.events;
    expect(events.flatMap((event) => (event.type === 'replaced' ? [event.replacedHash] : []))).toEqual([hashOf('a5')]);
    expect(grown(events)).toEqual([5, 5, 6]);
    expect(run.lines.filter((line) => line.level === 40)).toEqual([
      expect.objectContaining({ msg: 'blocks source: reorg, held blocks replaced' }),
    ]);
  });
});
