import { NEVER, firstValueFrom, from, map, toArray, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { sourceMessages } from '../../test/helpers/feed-formats.ts';
import { createLogger } from '../obs/logger.ts';
import { createMetricsRegistry } from '../obs/metrics.ts';
import type { Registry } from '../obs/metrics.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { WebSocketEvent } from '../rx/upstream-socket.ts';
import { createFlashblocksSource } from './flashblocks.ts';

/**
 * Marble tests of the flashblocks source's ordering rules, on the frames of a real block
 * (Unichain Sepolia 35535698, 5 flashblocks): when a flashblock is emitted relative to the
 * canonical heads (the ahead-buffer) and to the same frame from another upstream (de-dup).
 */
const block = 35535698n;
const messages = sourceMessages();
const frame = (index: number, url = 'ws://a'): WebSocketEvent => ({
  type: 'frame',
  url,
  data: Buffer.from(JSON.stringify(messages[index])),
  binary: false,
  receivedAt: 0,
});
/** Frames a..e are flashblocks 0..4 of the block; A..E the same frames from a second upstream. */
const frames = Object.fromEntries([
  ...'abcde'.split('').map((key, i) => [key, frame(i)]),
  ...'ABCDE'.split('').map((key, i) => [key, frame(i, 'ws://b')]),
]);
/** Emitted flashblocks as 0..4 (their index in the block). */
const grown = Object.fromEntries([0, 1, 2, 3, 4].map((i) => [String(i), `${block}/${i}`]));

function source(frames$: Observable<WebSocketEvent>, canonical$: Observable<bigint> | undefined, aheadBlocks: number, metrics: Registry) {
  const { events$ } = createFlashblocksSource({
    urls: [],
    frames$,
    canonical$,
    maxFrameBytes: 1 << 20,
    aheadBlocks,
    ws: { pingIntervalMs: 1000, reconnectMinMs: 100, reconnectMaxMs: 1000 },
    stop$: NEVER,
    logger: createLogger({ level: 'silent' }),
    metrics,
  });
  return events$.pipe(map((event) => (event.type === 'grew' ? `${event.block.blockNumber}/${event.block.index}` : event.type)));
}

const counted = async (metrics: Registry, name: string, labels: Record<string, string> = {}) =>
  (await metrics.getSingleMetric(name)?.get())?.values.find((value) =>
    Object.entries(labels).every(([key, label]) => value.labels[key] === label),
  )?.value ?? 0;

const scheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

describe('flashblocks source timing', () => {
  it('without canonical heads, emits each flashblock as its frame arrives', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const frames$ = hot<WebSocketEvent>('-a-b-c-d-e', frames);
      expectObservable(source(frames$, undefined, 5, createMetricsRegistry({ defaults: false }))).toBe('-0-1-2-3-4', grown);
    });
  });

  it('holds flashblocks whose parent is not canonical yet, and releases them in order the moment it is', async () => {
    const metrics = createMetricsRegistry({ defaults: false });
    scheduler().run(({ hot, expectObservable }) => {
      // The node's head is two blocks behind the feed's block, then its parent.
      const canonical$ = hot<bigint>('c--------d', { c: block - 2n, d: block - 1n });
      const frames$ = hot<WebSocketEvent>('-a-b-c--------d', frames);
      expectObservable(source(frames$, canonical$, 5, metrics)).toBe('---------(012)3', grown);
    });
    expect(await counted(metrics, 'flashlog_ingest_buffered_total')).toBe(3);
  });

  it('drops flashblocks more than aheadBlocks ahead of the canonical head instead of holding them', async () => {
    const metrics = createMetricsRegistry({ defaults: false });
    scheduler().run(({ hot, expectObservable }) => {
      const canonical$ = hot<bigint>('c------d', { c: block - 2n, d: block - 1n });
      const frames$ = hot<WebSocketEvent>('-a-b-c---', frames);
      expectObservable(source(frames$, canonical$, 0, metrics)).toBe('---------');
    });
    expect(await counted(metrics, 'flashlog_ingest_rejected_total', { reason: 'too_far_ahead' })).toBe(3);
  });

  it('emits a flashblock once, from whichever upstream delivers it first; the copy is a counted duplicate', async () => {
    const metrics = createMetricsRegistry({ defaults: false });
    scheduler().run(({ hot, expectObservable }) => {
      const frames$ = hot<WebSocketEvent>('-aA-Bb-cC', frames);
      expectObservable(source(frames$, undefined, 5, metrics)).toBe('-0--1--2-', grown);
    });
    expect(await counted(metrics, 'flashlog_ingest_rejected_total', { reason: 'duplicate' })).toBe(3);
  });
});

describe('flashblocks source: blocks the feed never showed', () => {
  const ZERO32 = `0x${'0'.repeat(64)}`;
  const ADDRESS = '0x00000000000000000000000000000000000000aa';
  /** A sealed block as the node answers it (no transactions). */
  const sealed = (n: bigint) => ({
    number: `0x${n.toString(16)}`,
    hash: `0x${n.toString(16).padStart(64, '0')}`,
    parentHash: `0x${(n - 1n).toString(16).padStart(64, '0')}`,
    timestamp: '0x1000',
    miner: ADDRESS,
    mixHash: ZERO32,
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    extraData: '0x',
    baseFeePerGas: '0x1',
    receiptsRoot: ZERO32,
    stateRoot: ZERO32,
    logsBloom: `0x${'0'.repeat(512)}`,
    transactions: [],
  });
  /** A node holding sealed blocks up to `head`; `asked` counts the reads by number. */
  function node(head: bigint) {
    const asked: bigint[] = [];
    const rpc: Upstream = {
      url: 'scripted',
      async call(method, params) {
        if (method === 'eth_getBlockByNumber') {
          const n = BigInt(String(params[0]));
          asked.push(n);
          return n <= head ? sealed(n) : null;
        }
        if (method === 'eth_getBlockReceipts') return [];
        throw new Error(`unexpected ${method}`);
      },
    };
    return { rpc, asked };
  }
  async function run(resumeFrom: bigint | null, maxBlocks: number, head: bigint) {
    const metrics = createMetricsRegistry({ defaults: false });
    const scripted = node(head);
    const { events$ } = createFlashblocksSource({
      urls: [],
      frames$: from([0, 1, 2].map((i) => frame(i))),
      maxFrameBytes: 1 << 20,
      aheadBlocks: 5,
      ws: { pingIntervalMs: 1000, reconnectMinMs: 100, reconnectMaxMs: 1000 },
      stop$: NEVER,
      logger: createLogger({ level: 'silent' }),
      metrics,
      backfill: { rpc: scripted.rpc, maxBlocks, resumeFrom },
    });
    const events = await firstValueFrom(events$.pipe(toArray()));
    const described = events.map((event) =>
      event.type === 'grew'
        ? `${event.block.blockNumber}/${event.block.index}${event.receipts ? ' sealed' : ''}`
        : event.type === 'gap'
          ? `gap ${event.from}..${event.to} ${event.reason}`
          : event.type,
    );
    return { described, metrics, asked: scripted.asked };
  }

  it("after a restart, the blocks between the log's last and the feed's first are read sealed from the node, in order", async () => {
    const { described, metrics } = await run(block - 4n, 600, block - 1n);
    expect(described).toEqual([
      `${block - 3n}/0 sealed`,
      `${block - 2n}/0 sealed`,
      `${block - 1n}/0 sealed`,
      `${block}/0`,
      `${block}/1`,
      `${block}/2`,
    ]);
    expect(await counted(metrics, 'flashlog_ingest_backfilled_total')).toBe(3);
  });

  it('more missing than --max-backfill-blocks: the newest are read, the rest is a gap, before them', async () => {
    const { described, asked } = await run(block - 10n, 2, block - 1n);
    expect(described.slice(0, 3)).toEqual([
      `gap ${block - 9n}..${block - 3n} beyond_max_backfill`,
      `${block - 2n}/0 sealed`,
      `${block - 1n}/0 sealed`,
    ]);
    expect(asked).toEqual([block - 2n, block - 1n]);
  });

  it("the log's last block is the one before the feed's: nothing read; a new log: nothing read", async () => {
    expect((await run(block - 1n, 600, block - 1n)).asked).toEqual([]);
    expect((await run(null, 600, block - 1n)).described).toEqual([`${block}/0`, `${block}/1`, `${block}/2`]);
  });
});
