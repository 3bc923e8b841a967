import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log, ProduceRecord } from '../../src/log/port.ts';
import { allTopics } from '../../src/records/topics.ts';
import type { ViewState } from '../../src/view/state.ts';
import { materialize } from '../../streams/materialize.ts';
import { createServe, type Serve } from '../../streams/serve.ts';
import { kafkaBrokers, tempDir, testContext } from '../helpers/context.ts';
import { prefixedLog } from '../helpers/prefixed-log.ts';
import { createRpcStub, type RpcStub } from '../helpers/rpc-stub.ts';
import { blockBuilder, chainRecord, sender, signedTransfers, zeroHash } from '../helpers/view-records.ts';

/**
 * A gateway restarted from its view snapshot answers exactly as one that replayed the whole log;
 * a corrupt snapshot, or one taken from another log, makes it replay the whole log instead.
 */
let dir: ReturnType<typeof tempDir>;
let stub: RpcStub;
let txs: Awaited<ReturnType<typeof signedTransfers>>;

beforeAll(async () => {
  dir = tempDir('flashlog-snapshot-');
  stub = await createRpcStub({ eth_blockNumber: () => '0x1', eth_getTransactionReceipt: () => null, eth_getBalance: () => '0x1' });
  txs = await signedTransfers(12);
});
afterAll(async () => {
  await stub?.close();
  dir?.remove();
});

/** Part 1: block 19 sealed, 20 pending with a diff, 21 started. Part 2: 21 grows, 20 is reorged out in part, 22 starts. */
function history(): { part1: ProduceRecord[]; part2: ProduceRecord[] } {
  const b19 = blockBuilder(19n);
  const b20 = blockBuilder(20n);
  const b21 = blockBuilder(21n);
  const b22 = blockBuilder(22n);
  const part1 = [
    ...b19.flashblock([txs[0]!]),
    chainRecord({ type: 'sealed', blockNumber: '0x13', blockHash: `0x${'13'.repeat(32)}`, transactions: [txs[0]!.hash] }),
    ...b20.flashblock([txs[1]!, txs[2]!], { stateDiff: { [sender.address]: { balance: '0x99', nonce: '0x3' } } }),
    ...b20.flashblock([txs[3]!]),
    ...b21.flashblock([txs[4]!]),
  ];
  const part2 = [
    ...b21.flashblock([txs[5]!, txs[6]!]),
    chainRecord({
      type: 'reorg',
      blockNumber: '0x14',
      blockHash: `0x${'14'.repeat(32)}`,
      transactions: [txs[1]!.hash],
      removedTransactions: [txs[2]!.hash, txs[3]!.hash],
    }),
    ...b21.flashblock([txs[7]!], { stateDiff: { [sender.address]: { balance: '0x77', nonce: '0x8' } } }),
    ...b22.flashblock([txs[8]!, txs[9]!]),
  ];
  return { part1, part2 };
}

const queries = (): [string, unknown[]][] => [
  ['eth_getBlockByNumber', ['pending', true]],
  ['eth_getLogs', [{ fromBlock: 'pending', toBlock: 'pending' }]],
  ['eth_getBalance', [sender.address, 'pending']],
  ['eth_getTransactionCount', [sender.address, 'pending']],
  ['eth_getBlockReceipts', ['pending']],
  ['eth_getTransactionReceipt', [txs[6]!.hash]],
  ['eth_getTransactionByHash', [txs[9]!.hash]],
];
async function answers(serve: Serve): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [method, params] of queries()) {
    const response = await fetch(serve.gateway.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    out.push(await response.json());
  }
  return out;
}
/**
 * Everything the view answers from. Left out: `change` (the last input's delta) and `dropped` (the
 * blocks kept for a late reorg record), which depend on how the three topics interleave as they are
 * read, in any replay: a full replay reads each topic in batches, a live view in append order. And
 * the counts of records applied and invalid: a replay skips the block records of blocks superseded
 * before its end (src/view/replay.ts), and which those are depends on where it started.
 */
const comparable = (state: ViewState) => ({ ...state, change: null, dropped: null, applied: 0, invalid: 0, lastInvalid: null });

describe('view snapshot on the embedded log', () => {
  it('a restart from the snapshot replays only the tail and answers exactly as a full replay', async () => {
    const snapshotPath = join(dir.path, 'data', 'view.snapshot.json');
    const log: Log = createEmbeddedLog({ path: join(dir.path, 'data', 'flashlog.db') });
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    const start = async (overrides: Record<string, unknown>) => {
      const ctx = testContext({ port: 0, rpc: stub.url, headPollMs: 0, dataDir: join(dir.path, 'data'), ...overrides });
      return { ctx, serve: await createServe(ctx, { log, rpcUrl: stub.url }) };
    };
    const fallbacks = async (ctx: ReturnType<typeof testContext>) =>
      await ctx.metrics.getSingleMetricAsString('flashlog_view_snapshot_fallbacks_total');
    try {
      const { part1, part2 } = history();
      await log.produce(part1);
      const first = await start({ viewSnapshot: undefined });
      expect((await first.serve.view.replayed).fromSnapshot).toBe(false);
      await first.serve.close();
      expect(existsSync(snapshotPath)).toBe(true);

      await log.produce(part2);
      const resumed = await start({ viewSnapshot: undefined });
      const full = await start({ viewSnapshot: 'off' });
      try {
        const resumedReplay = await resumed.serve.view.replayed;
        expect(resumedReplay.fromSnapshot).toBe(true);
        expect(resumedReplay.records).toBe(part2.length);
        expect((await full.serve.view.replayed).records).toBe(part1.length + part2.length);
        expect(comparable(resumed.serve.view.current())).toEqual(comparable(full.serve.view.current()));
        const expected = await answers(full.serve);
        expect((expected[0] as { result: { number: string } }).result.number).toBe('0x16');
        // `pending` is one block for every method: eth_getLogs(pending) is the logs of
        // eth_getBlockReceipts(pending), all in the pending block (21 is held too, below it).
        const [block, logs, , , receipts] = expected as { result: unknown }[];
        const pendingLogs = logs!.result as { blockNumber: string }[];
        expect(pendingLogs.length).toBeGreaterThan(0);
        expect(pendingLogs).toEqual((receipts!.result as { logs: unknown[] }[]).flatMap((receipt) => receipt.logs));
        expect(pendingLogs.every((log) => log.blockNumber === (block!.result as { number: string }).number)).toBe(true);
        expect(await answers(resumed.serve)).toEqual(expected);
      } finally {
        await full.serve.close();
        await resumed.serve.close();
      }

      // A corrupt snapshot: one warning, a full replay, the same answers.
      writeFileSync(snapshotPath, '{"format":"flashlog.view-snapshot","version":1,"digest":"00","body":"{}"}');
      const afterCorruption = await start({ viewSnapshot: undefined });
      try {
        expect((await afterCorruption.serve.view.replayed).fromSnapshot).toBe(false);
        expect(await fallbacks(afterCorruption.ctx)).toContain('reason="unreadable"} 1');
        expect(comparable(afterCorruption.serve.view.current())).toEqual(
          comparable(
            (
              await materialize(testContext(), { log }).then(async (view) => {
                await view.replayed;
                await view.close();
                return view;
              })
            ).current(),
          ),
        );
      } finally {
        await afterCorruption.serve.close();
      }
    } finally {
      await log.close();
    }
  });

  it('a snapshot of another log is not used, even where its last records match', async () => {
    const snapshotPath = join(dir.path, 'other', 'view.snapshot.json');
    const logA = createEmbeddedLog({ path: join(dir.path, 'a.db') });
    const logB = createEmbeddedLog({ path: join(dir.path, 'b.db') });
    try {
      for (const log of [logA, logB]) await log.ensureTopics(allTopics.map((name) => ({ name })));
      // The identity is the file's: the same after reopening it, another for another file.
      const reopened = createEmbeddedLog({ path: join(dir.path, 'a.db') });
      expect(await reopened.identity!()).toBe(await logA.identity!());
      await reopened.close();
      expect(await logB.identity!()).not.toBe(await logA.identity!());
      const { part1, part2 } = history();
      await logA.produce(part1);
      // Log B: the same number of records per topic, other contents (block 30 instead of 20), then more.
      const other = blockBuilder(30n);
      await logB.produce([
        ...part1.slice(0, 3),
        ...other.flashblock([txs[10]!, txs[11]!], { stateDiff: { [sender.address]: { balance: '0x5' } } }),
        ...part1.slice(3 + 3),
        ...part2,
      ]);
      const a = await materialize(testContext(), { log: logA, snapshot: { path: snapshotPath, intervalMs: 0 } });
      await a.replayed;
      await a.close();
      const ctx = testContext();
      const b = await materialize(ctx, { log: logB, snapshot: { path: snapshotPath, intervalMs: 0 } });
      const replay = await b.replayed;
      const fullB = await materialize(testContext(), { log: logB });
      await fullB.replayed;
      try {
        expect(replay.fromSnapshot).toBe(false);
        expect(await ctx.metrics.getSingleMetricAsString('flashlog_view_snapshot_fallbacks_total')).toContain('reason="other-log"} 1');
        expect(comparable(b.current())).toEqual(comparable(fullB.current()));
        expect(b.current().blocks.some((block) => block.number === 30n)).toBe(true);
        expect(b.current().canonical).toBe(20n);
      } finally {
        await b.close();
        await fullB.close();
      }
    } finally {
      await logA.close();
      await logB.close();
    }
  });
});

describe('view snapshot on Kafka', () => {
  it('a restart from the snapshot replays only the tail and builds the same view as a full replay', async () => {
    const prefix = `snap${Date.now().toString(36)}-`;
    const log = prefixedLog(createKafkaLog({ brokers: kafkaBrokers(), clientId: 'snapshot-test', maxWaitMs: 50 }), prefix);
    const snapshot = { path: join(dir.path, 'kafka', 'view.snapshot.json'), intervalMs: 0 };
    try {
      await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1 })));
      const { part1, part2 } = history();
      await log.produce(part1);
      const first = await materialize(testContext(), { log, snapshot });
      await first.replayed;
      await first.close();
      await log.produce(part2);
      const resumed = await materialize(testContext(), { log, snapshot });
      const full = await materialize(testContext(), { log });
      try {
        const replay = await resumed.replayed;
        await full.replayed;
        expect(replay.fromSnapshot).toBe(true);
        expect(replay.records).toBe(part2.length);
        expect(comparable(resumed.current())).toEqual(comparable(full.current()));
        expect(full.current().blocks.map((block) => block.number)).toEqual([21n, 22n]);
      } finally {
        await resumed.close();
        await full.close();
      }
    } finally {
      await log.close();
    }
  }, 60_000);
});
void zeroHash;
