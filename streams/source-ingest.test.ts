import { Subject } from 'rxjs';
import type { Executor } from '../src/execute/port.ts';
import { createLogger } from '../src/obs/logger.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AssembledBlock } from '../src/chain/assemble.ts';
import { initialSequencerState, step } from '../src/chain/sequencer.ts';
import { createEmbeddedLog } from '../src/log/embedded/embedded.ts';
import { allTopics, topics } from '../src/records/topics.ts';
import type { SourceEvent, SourceExecution } from '../src/source/port.ts';
import { blockRecordSchema } from '../src/records/blocks.ts';
import { chainRecordSchema } from '../src/records/chain.ts';
import { flashblockRecordSchema } from '../src/records/flashblocks.ts';
import { logRecordSchema, type RpcLog } from '../src/records/logs.ts';
import { decodeFrame } from '../src/wire/frame.ts';
import { readTopic } from '../test/helpers/execution-harness.ts';
import { testContext } from '../test/helpers/context.ts';
import { loadFixture } from '../test/helpers/feed-server.ts';
import { counterValue, openMemoryLog, unichainBlock } from '../test/helpers/source-ingest.ts';
import { createSourceIngest } from './source-ingest.ts';

/** Every flashblock of the real Unichain Sepolia block, assembled one by one, with its message. */
function unichainFlashblocks() {
  let state = initialSequencerState();
  return loadFixture('unichain-sepolia-35535698.json').map((frame) => {
    const decoded = decodeFrame(JSON.stringify(frame), { maxBytes: 16 * 1024 * 1024 });
    if (!decoded.ok) throw new Error(decoded.detail);
    const result = step(state, { type: 'flashblock', flashblock: decoded.flashblock });
    state = result.state;
    const accepted = result.events[0];
    if (accepted?.type !== 'accepted') throw new Error('not accepted');
    return { block: accepted.block, message: decoded.json };
  });
}

/** An executor whose every execution waits until `release()`; records what it was asked. */
function heldExecutor() {
  const calls: AssembledBlock[] = [];
  let release: () => void = () => undefined;
  let held = new Promise<void>((resolve) => (release = resolve));
  const executor: Executor = {
    kind: 'local',
    async execute(block) {
      calls.push(block);
      await held;
      return { receipts: [], stateDiff: null };
    },
    close: async () => undefined,
  };
  return {
    executor,
    calls,
    release() {
      release();
      held = Promise.resolve();
    },
  };
}

async function histogramCount(ctx: ReturnType<typeof testContext>, name: string): Promise<number> {
  const metric = ctx.metrics.getSingleMetric(name);
  const data = metric ? await metric.get() : { values: [] };
  return data.values.find((sample) => (sample as { metricName?: string }).metricName === `${name}_count`)?.value ?? 0;
}

/**
 * Fake time for the timers (setTimeout, Date): a wait of the topology's is moved through by the
 * test (`vi.advanceTimersByTimeAsync`), not slept. setImmediate stays real: the log's batch queue
 * drains on it, as it does in production.
 */
const fakeTime = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
afterEach(() => {
  vi.useRealTimers();
});

describe('the ingest topology, fed by a Source adapter', () => {
  it('publishes grew, replaced and lifecycle events as records, and measures latency once per appended block record', async () => {
    const ctx = testContext();
    const log = createEmbeddedLog({ path: ':memory:' });
    await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
    const events$ = new Subject<SourceEvent>();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ } });
    const done = ingest.run();

    const { block, message } = unichainBlock();
    const tx = block.transactions[block.firstNew]!;
    const emitted: RpcLog = {
      address: '0x4200000000000000000000000000000000000015',
      topics: [`0x${'11'.repeat(32)}`],
      data: '0x',
      blockNumber: `0x${block.blockNumber.toString(16)}`,
      blockHash: `0x${'22'.repeat(32)}`,
      blockTimestamp: '0x1',
      transactionHash: tx.hash,
      transactionIndex: `0x${block.firstNew.toString(16)}`,
      logIndex: '0x0',
      removed: false,
    };
    // A feed's flashblock (message, no receipts, no executor), then a node's block (receipts).
    events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now() - 5, message });
    events$.next({
      type: 'grew',
      block,
      receivedAt: Date.now() - 5,
      receipts: block.transactions.slice(block.firstNew).map((transaction, i) => ({
        transactionHash: transaction.hash,
        transactionIndex: `0x${(block.firstNew + i).toString(16)}`,
        blockHash: emitted.blockHash,
        blockNumber: emitted.blockNumber,
        from: '0x0000000000000000000000000000000000000001',
        to: null,
        cumulativeGasUsed: '0x1',
        gasUsed: '0x1',
        contractAddress: null,
        logs: i === 0 ? [emitted] : [],
        logsBloom: `0x${'00'.repeat(256)}`,
        status: '0x1',
        type: '0x7e',
      })),
    });
    events$.next({
      type: 'replaced',
      blockNumber: block.blockNumber,
      replacedHash: emitted.blockHash as `0x${string}`,
      byHash: null,
      transactions: [],
      removedTransactions: [tx.hash as `0x${string}`],
      index: 0,
      removedLogs: [{ ...emitted, removed: true }],
    });
    events$.next({ type: 'lifecycle', level: 'safe', blockNumber: block.blockNumber - 1n, blockHash: `0x${'33'.repeat(32)}` });
    // Canonical: a `sealed` record when it sealed a pre-confirmation held, nothing when none was.
    const sealedHash = `0x${'44'.repeat(32)}` as const;
    events$.next({
      type: 'lifecycle',
      level: 'canonical',
      blockNumber: block.blockNumber - 2n,
      blockHash: sealedHash,
      sealedTransactions: [],
    });
    events$.next({ type: 'lifecycle', level: 'canonical', blockNumber: block.blockNumber - 3n, blockHash: `0x${'55'.repeat(32)}` });
    events$.complete();
    await done;

    const flashblocks = (await readTopic(log, topics.flashblocks)).map((record) => flashblockRecordSchema.parse(JSON.parse(record.value)));
    expect(flashblocks).toHaveLength(1);
    expect(flashblocks[0]!.flashblock).toEqual(message);
    const blocks = (await readTopic(log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    expect(blocks.map((value) => value.executor)).toEqual([null, 'node']);
    expect(blocks[0]!.receipts).toBeNull();
    const logs = (await readTopic(log, topics.logs)).map((record) => logRecordSchema.parse(JSON.parse(record.value)));
    expect(logs.map((value) => value.removed)).toEqual([false, true]);
    const chain = (await readTopic(log, topics.chain)).map((record) => chainRecordSchema.parse(JSON.parse(record.value)));
    expect(chain.map((value) => value.type).sort()).toEqual(['reorg', 'safe', 'sealed']);
    expect(chain.find((value) => value.type === 'sealed')).toEqual({
      v: 1,
      type: 'sealed',
      blockNumber: `0x${(block.blockNumber - 2n).toString(16)}`,
      blockHash: sealedHash,
      transactions: [],
    });
    expect(chain.find((value) => value.type === 'reorg')).toMatchObject({ replacedBlockHash: emitted.blockHash });
    // Two block records appended: two latency samples, none from the other records.
    expect(await histogramCount(ctx, 'flashlog_ingest_latency_seconds')).toBe(2);
    await ctx.shutdown.run('test over');
    await log.close();
  });

  it('executes the flashblocks that queued behind a busy executor once, as the block so far, and keeps every feed message', async () => {
    fakeTime();
    const ctx = testContext();
    const log = await openMemoryLog();
    const events$ = new Subject<SourceEvent>();
    const held = heldExecutor();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ }, executor: held.executor });
    const done = ingest.run();
    // As an era C feed sends them (no receipts in the metadata: they must be executed).
    const flashblocks = unichainFlashblocks().map(({ block, message }) => ({ block: { ...block, metadataReceipts: null }, message }));
    for (const { block, message } of flashblocks) events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now(), message });
    await vi.advanceTimersByTimeAsync(20);
    // Index 0 is executing; 1..4 wait behind it.
    expect(held.calls.map((block) => block.index)).toEqual([0]);
    held.release();
    events$.complete();
    await done;

    const last = flashblocks[flashblocks.length - 1]!.block;
    expect(held.calls.map((block) => [block.index, block.firstNew, block.transactions.length])).toEqual([
      [0, 0, flashblocks[0]!.block.transactions.length],
      [last.index, flashblocks[0]!.block.transactions.length, last.transactions.length],
    ]);
    expect(await counterValue(ctx, 'flashlog_ingest_coalesced_total')).toBe(flashblocks.length - 2);
    const blocks = (await readTopic(log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    expect(blocks.map((value) => [value.index, value.firstNew])).toEqual([
      [0, 0],
      [last.index, flashblocks[0]!.block.transactions.length],
    ]);
    expect(await readTopic(log, topics.flashblocks)).toHaveLength(flashblocks.length);
    await ctx.shutdown.run('test over');
    await log.close();
  });

  it('does not merge flashblocks that carry their receipts (each is checked against its own receipts root)', async () => {
    const ctx = testContext();
    const log = await openMemoryLog();
    const events$ = new Subject<SourceEvent>();
    const held = heldExecutor();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ }, executor: held.executor });
    const done = ingest.run();
    const flashblocks = unichainFlashblocks();
    for (const { block, message } of flashblocks) events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now(), message });
    held.release();
    events$.complete();
    await done;
    expect(held.calls.map((block) => block.index)).toEqual(flashblocks.map(({ block }) => block.index));
    await ctx.shutdown.run('test over');
    await log.close();
  });
});

describe('the ingest topology and a source that reconciles', () => {
  it('tells the source of each execution as it starts; seals, reorgs and safe heads do not wait behind it, and the executor hears of them', async () => {
    fakeTime();
    const ctx = testContext();
    const log = await openMemoryLog();
    const events$ = new Subject<SourceEvent>();
    const held = heldExecutor();
    const heard: string[] = [];
    const executor: Executor = {
      ...held.executor,
      onCanonical: (n) => heard.push(`canonical ${n}`),
      onReorg: (n) => heard.push(`reorg ${n}`),
    };
    const told: { index: number; output: Promise<unknown> }[] = [];
    // The source's executions$ input, as streams/ingest.ts connects it.
    const executions$ = new Subject<SourceExecution>();
    executions$.subscribe(({ block, output }) => told.push({ index: block.index, output }));
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ }, executor, executions: executions$ });
    const done = ingest.run();
    const { block } = unichainBlock();
    const n = block.blockNumber;
    events$.next({ type: 'grew', block: { ...block, metadataReceipts: null }, receipts: null, receivedAt: Date.now() });
    events$.next({ type: 'lifecycle', level: 'canonical', blockNumber: n - 1n, blockHash: `0x${'44'.repeat(32)}`, sealedTransactions: [] });
    events$.next({
      type: 'replaced',
      blockNumber: n,
      replacedHash: null,
      byHash: `0x${'55'.repeat(32)}`,
      transactions: [],
      removedTransactions: [],
      index: block.index,
      removedLogs: [],
    });
    events$.next({ type: 'lifecycle', level: 'safe', blockNumber: n - 2n, blockHash: `0x${'33'.repeat(32)}` });
    await vi.advanceTimersByTimeAsync(20);
    // The execution holds the queue: the source was told of it; the seal, the reorg and the safe
    // head did not wait behind it, and the executor heard of the canonical and the replaced block.
    expect(told.map((entry) => entry.index)).toEqual([block.index]);
    expect(heard).toEqual([`canonical ${n - 1n}`, `reorg ${n}`]);
    await ingest.publisher.flush();
    const chain = (await readTopic(log, topics.chain)).map((record) => chainRecordSchema.parse(JSON.parse(record.value)));
    expect(chain.map((value) => value.type)).toEqual(['sealed', 'reorg', 'safe']);
    expect(chain[1]).not.toHaveProperty('replacedBlockHash');
    expect(await readTopic(log, topics.blocks)).toHaveLength(0);
    held.release();
    await expect(told[0]!.output).resolves.toEqual({ receipts: [], stateDiff: null });
    events$.complete();
    await done;
    expect(await readTopic(log, topics.blocks)).toHaveLength(1);
    await ctx.shutdown.run('test over');
    await log.close();
  });
});

describe('the ingest topology at shutdown (issue 19: an ingest that did not exit after SIGTERM)', () => {
  /** A context whose log lines are kept, with a short drain, and an executor that waits for `release`. */
  function setUp() {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      level: 'info',
      name: 'test',
      destination: { write: (line: string) => lines.push(JSON.parse(line)) } as never,
    });
    const ctx = { ...testContext({ drainTimeoutMs: 50 }), logger };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const calls: bigint[] = [];
    const executor: Executor = {
      kind: 'local',
      async execute(block) {
        calls.push(block.blockNumber);
        await released;
        return { receipts: [], stateDiff: null };
      },
      close: async () => {},
    };
    return { ctx, lines, executor, release, calls };
  }

  it('abandons an execution that does not finish within --drain-timeout-ms, with one log line', async () => {
    fakeTime();
    const { ctx, lines, executor, calls } = setUp();
    const log = createEmbeddedLog({ path: ':memory:' });
    await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
    const events$ = new Subject<SourceEvent>();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ }, executor });
    const done = ingest.run();
    const { block } = unichainBlock();
    events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now() });
    expect(calls).toHaveLength(1);
    const shutdown = ctx.shutdown.run('SIGTERM');
    events$.complete(); // the source stops on shutdown
    const abandoned = () => lines.filter((line) => String(line.msg).includes('--drain-timeout-ms'));
    await vi.advanceTimersByTimeAsync(49);
    expect(abandoned()).toHaveLength(0); // still within --drain-timeout-ms (50)
    await vi.advanceTimersByTimeAsync(1);
    expect(abandoned()).toEqual([expect.objectContaining({ drainTimeoutMs: 50 })]);
    await done; // without the bound, this never resolves (the execution never finishes)
    await shutdown;
    expect(abandoned()).toHaveLength(1);
    await log.close();
  });

  it('publishes flashblocks still queued at shutdown without executing them', async () => {
    const { ctx, lines, executor, release, calls } = setUp();
    const log = createEmbeddedLog({ path: ':memory:' });
    await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
    const events$ = new Subject<SourceEvent>();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ }, executor });
    const done = ingest.run();
    const { block } = unichainBlock();
    events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now() });
    events$.next({ type: 'grew', block: { ...block, index: block.index + 1 }, receipts: null, receivedAt: Date.now() });
    const shutdown = ctx.shutdown.run('SIGTERM');
    release(); // the execution in flight finishes; the queued flashblock is not executed
    events$.complete();
    await done;
    await shutdown;
    expect(calls).toHaveLength(1);
    const blocks = (await readTopic(log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    expect(blocks.map((value) => [value.index, value.executor, value.receipts])).toEqual([
      [block.index, 'local', []],
      [block.index + 1, null, null],
    ]);
    expect(lines.filter((line) => line.msg === 'shutdown: flashblocks queued at shutdown were published without receipts')).toEqual([
      expect.objectContaining({ flashblocks: 1 }),
    ]);
    expect(lines.filter((line) => String(line.msg).includes('--drain-timeout-ms'))).toHaveLength(0);
    await log.close();
  });
});

describe('createSourceIngest behind the chain', () => {
  it('an executor a block behind: the sealed block queued behind it is published unexecuted, and the next block is executed at once', async () => {
    // The timings CI met on a loaded machine, driven: block N's execution is still running when
    // its last flashblock and the next block's first arrive. Executed in turn, N's last records
    // would reach the log after N is sealed (the view drops them) and N+1 would wait behind it.
    fakeTime();
    const ctx = testContext();
    const log = await openMemoryLog();
    const events$ = new Subject<SourceEvent>();
    const held = heldExecutor();
    const reorgs: bigint[] = [];
    const executor: Executor = { ...held.executor, onReorg: (blockNumber) => reorgs.push(blockNumber) };
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'flashblocks', events$ }, executor });
    const done = ingest.run();
    const [first, second] = unichainFlashblocks().map(({ block }) => ({ ...block, metadataReceipts: null }));
    const next = { ...first!, blockNumber: first!.blockNumber + 1n };
    for (const block of [first!, second!, next]) events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now() });
    await vi.advanceTimersByTimeAsync(20);
    expect(held.calls.map((block) => [block.blockNumber, block.index])).toEqual([[first!.blockNumber, first!.index]]);
    held.release();
    events$.complete();
    await done;
    expect(held.calls.map((block) => [block.blockNumber, block.index])).toEqual([
      [first!.blockNumber, first!.index],
      [next.blockNumber, next.index],
    ]);
    expect(reorgs).toEqual([first!.blockNumber]);
    const blocks = (await readTopic(log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    expect(blocks.map((value) => [BigInt(value.blockNumber), value.index, value.executor])).toEqual([
      [first!.blockNumber, first!.index, 'local'],
      [second!.blockNumber, second!.index, null],
      [next.blockNumber, next.index, 'local'],
    ]);
    expect(await counterValue(ctx, 'flashlog_ingest_superseded_total')).toBe(1);
    await ctx.shutdown.run('test over');
    await log.close();
  });
});
