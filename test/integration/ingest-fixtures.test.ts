import { numberToHex, parseTransaction, type TransactionSerialized } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, take, toArray } from 'rxjs';
import { join } from 'node:path';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { allTopics, topics } from '../../src/records/topics.ts';
import { blockRecordSchema } from '../../src/records/blocks.ts';
import { flashblockRecordSchema } from '../../src/records/flashblocks.ts';
import { createExecutor } from '../../src/execute/create.ts';
import type { Executor } from '../../src/execute/port.ts';
import { logRecordSchema } from '../../src/records/logs.ts';
import { createIngest } from '../../streams/ingest.ts';
import { brotli, loadFixture, startFeedServer, type FeedServer } from '../helpers/feed-server.ts';
import { opRbuilderMessages, opSpecsMessages, xLayerFrames } from '../helpers/feed-formats.ts';
import { eventually, metricValue, tempDir, testContext } from '../helpers/context.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function ingestFrom(
  server: FeedServer,
  expectedRecords: number,
  options: { executor?: (ctx: ReturnType<typeof testContext>) => Promise<Executor>; logs?: boolean } = {},
) {
  const dir = tempDir();
  cleanups.push(dir.remove);
  const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
  cleanups.push(() => log.close());
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const ctx = testContext();
  const executor = options.executor ? await options.executor(ctx) : undefined;
  const ingest = createIngest(ctx, { log, endpoints: { source: 'flashblocks', feedUrls: [server.url] }, executor });
  const running = ingest.run();
  cleanups.push(async () => {
    await ctx.shutdown.run();
    await running;
    await executor?.close();
  });
  const consumer = log.consumer({ topics: [topics.blocks, topics.flashblocks, ...(options.logs ? [topics.logs] : [])] });
  cleanups.push(() => consumer.close());
  const records = await lastValueFrom(consumer.records$.pipe(take(expectedRecords), toArray()));
  return { records, ctx };
}

describe('ingest of the real fixture sequences over a real WebSocket', () => {
  it('assembles Base Sepolia 33439826 from brotli binary frames to the expected block', async () => {
    const messages = loadFixture('base-sepolia-33439826.json');
    const server = await startFeedServer(() => messages.map((message) => ({ send: brotli(JSON.stringify(message)) })));
    cleanups.push(() => server.close());
    const { records } = await ingestFrom(server, 22);
    const blocks = records
      .filter((record) => record.topic === topics.blocks)
      .map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    const flashblocks = records
      .filter((record) => record.topic === topics.flashblocks)
      .map((record) => flashblockRecordSchema.parse(JSON.parse(record.value)));
    expect(flashblocks.map((record) => record.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(flashblocks[3]!.flashblock).toEqual(messages[3]);
    const last = blocks.at(-1)!;
    expect(blocks).toHaveLength(11);
    expect(records.filter((record) => record.topic === topics.blocks).every((record) => record.key === '33439826')).toBe(true);
    expect(last).toMatchObject({
      v: 1,
      blockNumber: '0x1fe4052',
      index: 10,
      payloadId: '0x03c33cc62b81edb6',
      firstNew: 22,
      header: {
        parentHash: '0x6ffd2714d5af6c412c57db3f664a5a127516573bbd987fd242d06f71ea662741',
        timestamp: '0x690fdf84',
        miner: '0x4200000000000000000000000000000000000011',
        gasLimit: '0x3938700',
        gasUsed: '0x49f43c',
        stateRoot: `0x${'0'.repeat(64)}`,
        flashblockHash: '0x2b440a266840a96993d85d45d1de1e81f7a859aaac4654dcd5a990ffa2ef947b',
        receiptsRoot: '0xaa280e93aa4a7d3f616ad391404411abbeebe8bc8fb1ed9b3ef4d0a42bf64ccd',
        withdrawalsRoot: '0x77b0fb1616a212bd7cf33d7c28651f19bf6093b2c5f1967e674ec861aeaf9d44',
        parentBeaconBlockRoot: '0xf058b1e43890ed5f838bd07e77db06d075d894343d1b31f6099a345b0d8f7d1b',
      },
    });
    expect(last.transactions).toHaveLength(24);
    expect(last.transactions[0]!.hash).toBe('0x68fdd667a6f50d56d4dad5982098f79df89a512bebe32403ec1d203c9be4a292');
    // The running transaction counts per index: 1,3,4,4,8,9,12,17,21,22,24.
    expect(blocks.map((block) => block.transactions.length)).toEqual([1, 3, 4, 4, 8, 9, 12, 17, 21, 22, 24]);
  });

  it('assembles Unichain Sepolia 35535698 from text frames, keeping era A receipts in the raw record', async () => {
    const messages = loadFixture('unichain-sepolia-35535698-with-receipts.json');
    const server = await startFeedServer(() => messages.map((message) => ({ send: JSON.stringify(message) })));
    cleanups.push(() => server.close());
    const { records } = await ingestFrom(server, 10);
    const blocks = records
      .filter((record) => record.topic === topics.blocks)
      .map((record) => blockRecordSchema.parse(JSON.parse(record.value)));
    const last = blocks.at(-1)!;
    expect(last.header).toMatchObject({
      gasUsed: '0x32138',
      flashblockHash: '0xc463a3120c35268f610d969f5608b479332ef10953af77c7a6be806195831196',
      stateRoot: '0x5615e4342d231c352438f0ba6a8f0f641459f67961961764b781a909969b28ad',
      receiptsRoot: '0x588e1d47b0618d7e935b20c3945cba3b7b8c00141904f79ceed20312ea502e63',
      withdrawalsRoot: '0x62ed62e0391b081bf172f287fbbe75e87d8a6c22f1d3b1f1aef4788c134633d2',
    });
    expect(last.transactions.map((tx) => tx.hash).at(-1)).toBe('0x6d65b11050eee84c3f492106ca95057825d34274b5ca9bcf533885a7ff238d39');
    const raw = records
      .filter((record) => record.topic === topics.flashblocks)
      .map((record) => JSON.parse(record.value) as { flashblock: { metadata: { receipts: object } } });
    expect(Object.keys(raw[0]!.flashblock.metadata.receipts)).toHaveLength(2);
  });
});

describe('ingest of the producers that still stream flashblocks: real WebSocket, decode, sequence, assemble, execute, publish into the embedded log', () => {
  // The real Unichain Sepolia block 35535698 in each producer's envelope (test/helpers/feed-formats.ts).
  const finalHeader = {
    number: '0x21e3b52',
    gasUsed: '0x32138',
    flashblockHash: '0xc463a3120c35268f610d969f5608b479332ef10953af77c7a6be806195831196',
    stateRoot: '0x5615e4342d231c352438f0ba6a8f0f641459f67961961764b781a909969b28ad',
    receiptsRoot: '0x588e1d47b0618d7e935b20c3945cba3b7b8c00141904f79ceed20312ea502e63',
    withdrawalsRoot: '0x62ed62e0391b081bf172f287fbbe75e87d8a6c22f1d3b1f1aef4788c134633d2',
  };
  const autoExecutor = (ctx: ReturnType<typeof testContext>) =>
    createExecutor('auto', { rpcUrl: undefined, timeoutMs: 1000, logger: ctx.logger, metrics: ctx.metrics });
  const split = (records: { topic: string; value: string }[]) => ({
    blocks: records.filter((record) => record.topic === topics.blocks).map((record) => blockRecordSchema.parse(JSON.parse(record.value))),
    flashblocks: records
      .filter((record) => record.topic === topics.flashblocks)
      .map((record) => flashblockRecordSchema.parse(JSON.parse(record.value))),
    logs: records.filter((record) => record.topic === topics.logs).map((record) => logRecordSchema.parse(JSON.parse(record.value))),
  });

  it('op-rbuilder text frames: receipts from metadata (auto executor), one flashlog.logs record per log, in block order', async () => {
    const server = await startFeedServer(() => opRbuilderMessages().map((message) => ({ send: JSON.stringify(message) })));
    cleanups.push(() => server.close());
    const { records, ctx } = await ingestFrom(server, 14, { executor: autoExecutor, logs: true });
    const { blocks, flashblocks, logs } = split(records);
    expect(flashblocks.map((record) => record.index)).toEqual([0, 1, 2, 3, 4]);
    expect(blocks.at(-1)!.header).toMatchObject({ ...finalHeader, blobGasUsed: '0x0' });
    expect(blocks.map((block) => block.executor)).toEqual(['metadata', 'metadata', 'metadata', 'metadata', 'metadata']);
    const receipts = blocks.flatMap((block) => block.receipts ?? []);
    expect(receipts.map((receipt) => receipt.transactionHash)).toEqual(blocks.at(-1)!.transactions.map((tx) => tx.hash));
    expect(receipts.map((receipt) => receipt.cumulativeGasUsed).at(-1)).toBe('0x32138');
    // The state diff: balances from new_account_balances (every account touched so far) and each
    // sender's nonce after its last transaction (a deposit's from its receipt); nothing else is claimed.
    const lastBalances = (opRbuilderMessages().at(-1)!.metadata as { new_account_balances: Record<string, string> }).new_account_balances;
    const expectedDiff: Record<string, { balance?: string; nonce?: string }> = {};
    for (const [address, balance] of Object.entries(lastBalances)) expectedDiff[address] = { balance };
    receipts.forEach((receipt, i) => {
      const raw = blocks.at(-1)!.transactions[i]!.raw;
      const nonce = raw.startsWith('0x7e') ? BigInt(receipt.depositNonce!) : BigInt(parseTransaction(raw as TransactionSerialized).nonce!);
      expectedDiff[receipt.from] = { ...expectedDiff[receipt.from], nonce: numberToHex(nonce + 1n) };
    });
    expect(blocks.at(-1)!.stateDiff).toEqual(expectedDiff);
    expect(logs.map((log) => log.logIndex)).toEqual(['0x0', '0x1', '0x2', '0x3']);
    expect(logs.map((log) => log.transactionHash)).toEqual(
      receipts.filter((receipt) => receipt.logs.length > 0).map((receipt) => receipt.transactionHash),
    );
    expect(await metricValue(ctx, 'flashlog_ingest_rejected_total')).toBe(0);
    expect(await metricValue(ctx, 'flashlog_execution_errors_total')).toBe(0);
    // Each flashblock's receipts give its own receipts_root and gas_used.
    expect(await metricValue(ctx, 'flashlog_executor_checks_total', { result: 'match' })).toBe(5);
    expect(await metricValue(ctx, 'flashlog_executor_mismatches_total')).toBe(0);
  });

  it('X Layer frames: target_index kept in the raw record, the end-of-sequence frame counted and not rejected', async () => {
    const server = await startFeedServer(() => xLayerFrames().map((message) => ({ send: JSON.stringify(message) })));
    cleanups.push(() => server.close());
    const { records, ctx } = await ingestFrom(server, 14, { executor: autoExecutor, logs: true });
    const { blocks, flashblocks, logs } = split(records);
    expect(flashblocks.map((record) => (record.flashblock as { target_index: number }).target_index)).toEqual([0, 4, 4, 4, 4]);
    expect(blocks.at(-1)!.header).toMatchObject(finalHeader);
    expect(blocks.flatMap((block) => block.receipts ?? [])).toHaveLength(6);
    expect(logs).toHaveLength(4);
    await eventually(
      async () => (await metricValue(ctx, 'flashlog_ingest_end_of_sequence_total')) === 1 || undefined,
      5000,
      'the end-of-sequence frame',
    );
    expect(await metricValue(ctx, 'flashlog_ingest_rejected_total')).toBe(0);
  });

  it('OP-specs brotli frames: later indices numbered by payload id, the block assembled as from the Base-format feed; no receipts to take', async () => {
    const messages = await opSpecsMessages();
    const server = await startFeedServer(() => messages.map((message) => ({ send: brotli(JSON.stringify(message)) })));
    cleanups.push(() => server.close());
    const { records, ctx } = await ingestFrom(server, 10);
    const { blocks, flashblocks } = split(records);
    expect(flashblocks.map((record) => [record.blockNumber, record.index])).toEqual([0, 1, 2, 3, 4].map((index) => ['0x21e3b52', index]));
    expect(flashblocks[0]!.flashblock).toEqual(messages[0]); // the raw record is the message as received
    expect(blocks.at(-1)!.header).toMatchObject(finalHeader);
    expect(
      blocks
        .at(-1)!
        .transactions.map((tx) => tx.hash)
        .at(-1),
    ).toBe('0x6d65b11050eee84c3f492106ca95057825d34274b5ca9bcf533885a7ff238d39');
    expect(blocks.every((block) => block.receipts === null)).toBe(true);
    expect(await metricValue(ctx, 'flashlog_ingest_rejected_total')).toBe(0);
  });
});
