import { afterEach, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { topics } from '../../src/records/topics.ts';
import { blockRecordSchema, type BlockRecord } from '../../src/records/blocks.ts';
import { chainRecordSchema, type ChainRecord } from '../../src/records/chain.ts';
import { flashblockRecordSchema } from '../../src/records/flashblocks.ts';
import { logRecordSchema, type LogRecordValue } from '../../src/records/logs.ts';
import { eventually, metricValue, testContext } from '../helpers/context.ts';
import { readTopic, startFlashlog, startRpcProxy, type FlashlogUnderTest } from '../helpers/execution-harness.ts';

/**
 * End to end on the devnet (real EVM, real flashblocks WebSocket in Base's wire format, real
 * JSON-RPC): flashlog ingest with the local executor and reconciliation, into an embedded log.
 * Short blocks (1 s, flashblocks every 250 ms) keep 30+ blocks under a minute on a shared 2-core
 * machine; the executor takes about 100 ms a flashblock here, so shorter flashblocks fall behind.
 */
const ZERO = `0x${'0'.repeat(64)}`;
type Json = Record<string, unknown>;

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function collect(flashlog: FlashlogUnderTest) {
  const blocks = (await readTopic(flashlog.log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
  const logs = (await readTopic(flashlog.log, topics.logs)).map((record) => ({
    key: record.key,
    value: logRecordSchema.parse(JSON.parse(record.value)),
  }));
  const chain = (await readTopic(flashlog.log, topics.chain)).map((record) => chainRecordSchema.parse(JSON.parse(record.value)));
  const flashblocks = (await readTopic(flashlog.log, topics.flashblocks)).map((record) =>
    flashblockRecordSchema.parse(JSON.parse(record.value)),
  );
  return { blocks, logs, chain, flashblocks };
}

/**
 * The blocks flashlog saw from their first transaction (the first block may have been joined
 * mid-way; a first record may stand for index 0 and the flashblocks queued behind it).
 */
function completeBlocks(blocks: readonly BlockRecord[]): Map<bigint, BlockRecord[]> {
  const byNumber = new Map<bigint, BlockRecord[]>();
  for (const block of blocks) {
    const number = BigInt(block.blockNumber);
    if (!byNumber.has(number) && block.firstNew !== 0) continue;
    byNumber.set(number, [...(byNumber.get(number) ?? []), block]);
  }
  return byNumber;
}

function expectSameFields(ours: Json, canonical: Json, where: string, skip: readonly string[]) {
  for (const [field, value] of Object.entries(canonical)) {
    if (skip.includes(field)) continue;
    expect({ where, field, value: ours[field] }).toEqual({ where, field, value });
  }
}

describe('execution and reconciliation on the devnet', () => {
  let devnet: Devnet | undefined;
  let flashlog: FlashlogUnderTest | undefined;
  afterEach(async () => {
    await flashlog?.stop().catch(() => undefined);
    await devnet?.close();
    flashlog = undefined;
    devnet = undefined;
  });

  it('with --load, 30+ sealed blocks: receipts and logs published while pre-confirmed equal the canonical ones, and every receipts_root check passes', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 250, load: 30, rpcPort: 0, wsPort: 0 });
    const ctx = testContext({ rpc: devnet.rpcUrl, executor: 'local', canonicalPollMs: 100 });
    flashlog = await startFlashlog(ctx, { wsUrl: devnet.wsUrl, rpcUrl: devnet.rpcUrl });
    // A block whose successor queued behind a busy executor is published without receipts, by
    // design (flashlog_ingest_superseded_total, streams/source-ingest.ts): on a loaded machine wait
    // for as many more sealed blocks, so that 33 are compared whole.
    const superseded = () => metricValue(ctx, 'flashlog_ingest_superseded_total');
    await eventually(
      async () =>
        (await metricValue(ctx, 'flashlog_reconcile_total', { result: 'sealed' })) >= 33 + (await superseded()) ? true : undefined,
      120_000,
      '33 sealed blocks beside those superseded',
    );
    const supersededBlocks = await superseded();
    await flashlog.stop();
    const { blocks, logs, chain } = await collect(flashlog);
    const complete = completeBlocks(blocks);
    // Superseded blocks: every record of theirs without receipts, never wrong ones; no more of them
    // than the metric counted, and at most a third of the blocks (else execution never kept up).
    const unexecuted = new Set(
      [...complete].filter(([, records]) => records.some((block) => block.receipts === null)).map(([number]) => number),
    );
    expect(unexecuted.size).toBeLessThanOrEqual(supersededBlocks);
    const sealed = chain.filter(
      (record): record is Extract<ChainRecord, { type: 'sealed' }> =>
        record.type === 'sealed' && complete.has(BigInt(record.blockNumber)) && !unexecuted.has(BigInt(record.blockNumber)),
    );
    expect(unexecuted.size).toBeLessThanOrEqual(sealed.length / 2);
    expect(sealed.length).toBeGreaterThanOrEqual(30);
    expect(chain.filter((record) => record.type === 'reorg')).toEqual([]);

    let txTotal = 0;
    const kinds = { deposits: 0, reverts: 0, deployments: 0, logs: 0 };
    for (const record of sealed) {
      const number = BigInt(record.blockNumber);
      const where = `block ${number}`;
      const published = new Map<string, Json>();
      for (const block of complete.get(number)!) {
        expect(block.receipts, `${where} index ${block.index} has receipts`).not.toBeNull();
        expect(block.executor).toBe('local');
        for (const receipt of block.receipts!) published.set(receipt.transactionHash, receipt);
      }
      const canonicalReceipts = await rpc<Json[]>(devnet.rpcUrl, 'eth_getBlockReceipts', [record.blockNumber]);
      expect(canonicalReceipts.map((receipt) => receipt.transactionHash)).toEqual(record.transactions);
      expect(published.size).toBe(canonicalReceipts.length);
      txTotal += canonicalReceipts.length;
      const canonicalLogs: Json[] = [];
      for (const canonical of canonicalReceipts) {
        const ours = published.get(canonical.transactionHash as string)!;
        expect(ours.blockHash).toBe(ZERO);
        expectSameFields(ours, canonical, `${where} ${canonical.transactionHash}`, ['blockHash', 'logs']);
        const ourLogs = ours.logs as Json[];
        const theirLogs = canonical.logs as Json[];
        expect(ourLogs.length).toBe(theirLogs.length);
        theirLogs.forEach((log, i) => {
          expectSameFields(ourLogs[i]!, log, `${where} ${canonical.transactionHash} log ${i}`, ['blockHash']);
          expect(ourLogs[i]!.blockHash).toBe(ZERO);
          expect(ourLogs[i]!.removed).toBe(false);
        });
        canonicalLogs.push(...theirLogs);
        if (canonical.type === '0x7e' && BigInt(canonical.transactionIndex as string) > 0n) kinds.deposits++;
        if (canonical.status === '0x0') kinds.reverts++;
        if (canonical.contractAddress) kinds.deployments++;
      }
      // flashlog.logs: one record per log, keyed by the emitting address, equal to the canonical log.
      const topicLogs = logs.filter((entry) => BigInt(entry.value.blockNumber) === number);
      expect(topicLogs.length).toBe(canonicalLogs.length);
      kinds.logs += topicLogs.length;
      const byIndex = new Map(topicLogs.map((entry) => [BigInt(entry.value.logIndex), entry]));
      for (const log of canonicalLogs) {
        const entry = byIndex.get(BigInt(log.logIndex as string))!;
        expect(entry.key).toBe((log.address as string).toLowerCase());
        expectSameFields(entry.value as unknown as Json, log, `${where} flashlog.logs ${String(log.logIndex)}`, ['blockHash']);
        expect(entry.value.removed).toBe(false);
      }
    }
    expect(txTotal / sealed.length).toBeGreaterThanOrEqual(20);
    expect(kinds.deposits).toBeGreaterThan(0);
    expect(kinds.reverts).toBeGreaterThan(0);
    expect(kinds.deployments).toBeGreaterThan(0);
    expect(kinds.logs).toBeGreaterThan(0);
    // Every executed flashblock was checked against its receipts_root, and none failed.
    const executed = blocks.filter((block) => block.receipts !== null).length;
    expect(await metricValue(ctx, 'flashlog_executor_checks_total', { result: 'match' })).toBeGreaterThanOrEqual(executed);
    expect(await metricValue(ctx, 'flashlog_executor_checks_total', { result: 'mismatch' })).toBe(0);
  }, 120_000);

  it('with --reorg-every: each reorg publishes the reorg record and removed: true copies of exactly the logs of the transaction left out', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 250, load: 30, reorgEvery: 3, rpcPort: 0, wsPort: 0 });
    const dropped = new Map<bigint, Hex | null>();
    devnet.onSealed((block) => {
      dropped.set(block.number, block.dropped);
    });
    const ctx = testContext({ rpc: devnet.rpcUrl, executor: 'local', canonicalPollMs: 100 });
    flashlog = await startFlashlog(ctx, { wsUrl: devnet.wsUrl, rpcUrl: devnet.rpcUrl });
    // Which transaction a reorg leaves out is the block's last one, whatever the load sent, so run
    // until at least 4 reorgs happened and one left out a transaction with logs (its canonical
    // receipt, one block later, shows them); only then are removed copies certain to be due.
    const leftOutWithLogs = new Set<Hex>();
    await eventually(
      async () => {
        for (const left of dropped.values()) {
          if (!left || leftOutWithLogs.has(left)) continue;
          const receipt = await rpc<{ logs: unknown[] } | null>(devnet!.rpcUrl, 'eth_getTransactionReceipt', [left]);
          if (receipt && receipt.logs.length > 0) leftOutWithLogs.add(left);
        }
        const reorgs = await metricValue(ctx, 'flashlog_reconcile_total', { result: 'reorg' });
        return reorgs >= 4 && leftOutWithLogs.size > 0 ? true : undefined;
      },
      110_000,
      '4 reorgs, one leaving out a transaction with logs',
    );
    await flashlog.stop();
    const { blocks, logs, chain } = await collect(flashlog);
    const complete = completeBlocks(blocks);
    const reorgs = chain.filter((record): record is Extract<ChainRecord, { type: 'reorg' }> => record.type === 'reorg');
    expect(reorgs.length).toBeGreaterThanOrEqual(4);
    const removed = logs.filter((entry) => entry.value.removed);
    const removedKey = (log: LogRecordValue) =>
      `${BigInt(log.blockNumber)}|${log.transactionHash}|${BigInt(log.logIndex)}|${log.address}|${log.topics.join(',')}|${log.data}`;
    const expected = new Set<string>();
    let withLogs = 0;
    for (const record of reorgs) {
      const number = BigInt(record.blockNumber);
      const left = dropped.get(number);
      expect(left, `block ${number} was a --reorg-every block`).toBeTruthy();
      expect(record.removedTransactions).toEqual([left]);
      expect(record.transactions).not.toContain(left);
      const preconfirmed = logs.filter(
        (entry) => !entry.value.removed && BigInt(entry.value.blockNumber) === number && entry.value.transactionHash === left,
      );
      if (preconfirmed.length > 0) withLogs++;
      for (const entry of preconfirmed) expected.add(removedKey(entry.value));
    }
    // At least one left-out transaction had logs, so removed copies were really produced.
    expect(withLogs).toBeGreaterThan(0);
    // Exactly those, each once, with the emitting address as key; nothing else was withdrawn.
    expect(removed.map((entry) => removedKey(entry.value)).sort()).toEqual([...expected].sort());
    for (const entry of removed) expect(entry.key).toBe(entry.value.address.toLowerCase());
    // Blocks sealed as pre-confirmed are `sealed`, never `reorg` (safe / finalized records come beside them).
    for (const record of chain.filter((value) => value.type === 'sealed' || value.type === 'reorg')) {
      const number = BigInt(record.blockNumber);
      if (!complete.has(number) || !dropped.has(number)) continue;
      expect({ number, type: record.type }).toEqual({ number, type: dropped.get(number) ? 'reorg' : 'sealed' });
    }
  }, 150_000);

  it('upstream RPC down for 10 s mid-run: flashlog recovers by itself and no flashblock is lost from the log', async () => {
    devnet = await createDevnet({ blockTimeMs: 1000, flashblockMs: 250, load: 30, rpcPort: 0, wsPort: 0 });
    const proxy = await startRpcProxy(devnet.rpcUrl);
    try {
      const emitted: string[] = [];
      devnet.onFlashblock((flashblock) => {
        emitted.push(`${flashblock.metadata.block_number}/${flashblock.index}`);
      });
      const ctx = testContext({ rpc: proxy.url, executor: 'local', canonicalPollMs: 100 });
      flashlog = await startFlashlog(ctx, { wsUrl: devnet.wsUrl, rpcUrl: proxy.url });
      const sealed = () => metricValue(ctx, 'flashlog_reconcile_total', { result: 'sealed' });
      await eventually(async () => ((await sealed()) >= 4 ? true : undefined), 30_000, '4 sealed blocks before the outage');
      proxy.setDown(true);
      const downAt = BigInt(emitted.at(-1)!.split('/')[0]!);
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const sealedDuring = await sealed();
      proxy.setDown(false);
      const upAt = BigInt(emitted.at(-1)!.split('/')[0]!);
      // Recovery: canonical heads followed again and blocks after the outage executed and sealed.
      await eventually(
        async () =>
          (await sealed()) >= sealedDuring + 5 && (await metricValue(ctx, 'flashlog_canonical_block_number')) > Number(upAt + 3n)
            ? true
            : undefined,
        45_000,
        'sealed blocks after the outage',
      );
      await flashlog.stop();
      expect(await metricValue(ctx, 'flashlog_upstream_errors_total', { purpose: 'canonical' })).toBeGreaterThan(0);
      const { blocks, chain, flashblocks } = await collect(flashlog);
      // Every flashblock the devnet sent, from the first complete block flashlog saw to the block
      // before it was stopped, is in flashlog.flashblocks, once.
      const inLog = flashblocks.map((record) => `${BigInt(record.blockNumber)}/${record.index}`);
      expect(new Set(inLog).size).toBe(inLog.length);
      const first = BigInt(blocks.find((block) => block.firstNew === 0)!.blockNumber);
      const last = BigInt(flashblocks.at(-1)!.blockNumber);
      const expected = emitted.filter((key) => {
        const n = BigInt(key.split('/')[0]!);
        return n >= first && n < last;
      });
      expect(expected.length).toBeGreaterThan(40);
      const logged = new Set(inLog);
      expect(expected.filter((key) => !logged.has(key))).toEqual([]);
      // The outage spanned real blocks, and blocks after it carry receipts again and were sealed.
      expect(upAt - downAt).toBeGreaterThanOrEqual(8n);
      expect(blocks.some((block) => BigInt(block.blockNumber) > upAt + 1n && block.receipts !== null && block.receipts.length > 0)).toBe(
        true,
      );
      expect(chain.some((record) => record.type === 'sealed' && BigInt(record.blockNumber) > upAt)).toBe(true);
      expect(await metricValue(ctx, 'flashlog_executor_checks_total', { result: 'mismatch' })).toBe(0);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});
