import { afterEach, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { createDevnet, type Devnet } from '../../src/devnet/devnet.ts';
import { topics } from '../../src/log/topics.ts';
import { blockRecordSchema, chainRecordSchema, flashblockRecordSchema, logRecordSchema, type BlockRecord, type ChainRecord, type LogRecordValue } from '../../src/schemas/records.ts';
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
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = await response.json() as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function collect(flashlog: FlashlogUnderTest) {
  const blocks = (await readTopic(flashlog.log, topics.blocks)).map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
  const logs = (await readTopic(flashlog.log, topics.logs)).map((record) => ({ key: record.key, value: logRecordSchema.parse(JSON.parse(record.value)) }));
  const chain = (await readTopic(flashlog.log, topics.chain)).map((record) => chainRecordSchema.parse(JSON.parse(record.value)));
  const flashblocks = (await readTopic(flashlog.log, topics.flashblocks)).map((record) => flashblockRecordSchema.parse(JSON.parse(record.value)));
  return { blocks, logs, chain, flashblocks };
}

/** The blocks flashlog saw from index 0 (the first block may have been joined mid-way). */
function completeBlocks(blocks: readonly BlockRecord[]): Map<bigint, BlockRecord[]> {
  const byNumber = new Map<bigint, BlockRecord[]>();
  for (const block of blocks) {
    const number = BigInt(block.blockNumber);
    if (!byNumber.has(number) && block.index !== 0) continue;
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
    await eventually(async () => ((await metricValue(ctx, 'flashlog_reconcile_total', { result: 'sealed' })) >= 33 ? true : undefined), 75_000, '33 sealed blocks');
    await flashlog.stop();
    const { blocks, logs, chain } = await collect(flashlog);
    const complete = completeBlocks(blocks);
    const sealed = chain.filter((record): record is Extract<ChainRecord, { type: 'sealed' }> => record.type === 'sealed' && complete.has(BigInt(record.blockNumber)));
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
});
