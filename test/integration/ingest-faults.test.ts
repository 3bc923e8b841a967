import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { lastValueFrom, take, toArray, timeout } from 'rxjs';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { allTopics, topics } from '../../src/records/topics.ts';
import { flashblockRecordSchema } from '../../src/records/flashblocks.ts';
import { createIngest } from '../../streams/ingest.ts';
import { brotli, loadFixture, startFeedServer, type FeedStep } from '../helpers/feed-server.ts';
import { eventually, metricValue, tempDir, testContext } from '../helpers/context.ts';

const unichain = loadFixture('unichain-sepolia-35535698.json');
/** The real Unichain block renumbered to `number`: five flashblocks, indices 0-4. */
const blockOf = (number: number) =>
  unichain.map((message) => ({
    ...message,
    payload_id: `0x${number.toString(16).padStart(16, '0')}`,
    base: message.base ? { ...(message.base as object), block_number: `0x${number.toString(16)}` } : message.base,
    metadata: { ...(message.metadata as object), block_number: number },
  }));
const frame = (message: object): FeedStep => ({ send: brotli(JSON.stringify(message)) });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(urls: string[]) {
  const dir = tempDir();
  cleanups.push(dir.remove);
  const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
  cleanups.push(() => log.close());
  await log.ensureTopics(allTopics.map((name) => ({ name })));
  const ctx = testContext({ reconnectMinMs: 50, reconnectMaxMs: 200, maxFrameBytes: 1024 * 1024 });
  const ingest = createIngest(ctx, { log, endpoints: { source: 'flashblocks', feedUrls: urls } });
  const running = ingest.run();
  cleanups.push(async () => {
    await ctx.shutdown.run();
    await running;
  });
  return { log, ctx };
}

describe('ingest under a hostile feed', () => {
  it('drops duplicates, gaps, bad first indices, garbage, bombs; survives a dropped connection; counts each reason', async () => {
    const [b10, b11, b12, b13] = [blockOf(10), blockOf(11), blockOf(12), blockOf(13)];
    const server = await startFeedServer((connection) =>
      connection === 0
        ? [
            frame(b10[0]!),
            frame(b10[1]!),
            frame(b10[1]!),
            frame(b10[2]!),
            { send: Buffer.from('this is not a flashblock \u0000\u00ff', 'latin1') },
            { send: brotli(' '.repeat(8 * 1024 * 1024)) }, // 8 MiB inflated > 1 MiB cap
            { send: '{"payload_id": "0x01", ', binary: false },
            frame(b10[3]!),
            { drop: true }, // mid-block
          ]
        : connection === 1
          ? [
              frame(b10[4]!),
              frame(b11[0]!),
              frame(b11[1]!),
              frame(b11[3]!),
              frame(b11[4]!), // gap at 11/3, then 11/4 belongs to a dropped block
              frame(b12[3]!),
              frame(b12[4]!), // block 12 starts at index 3
              ...b13.map(frame),
            ]
          : [],
    );
    cleanups.push(() => server.close());
    const { log, ctx } = await setup([server.url]);
    const consumer = log.consumer({ topics: [topics.flashblocks] });
    cleanups.push(() => consumer.close());
    const records = await lastValueFrom(consumer.records$.pipe(take(12), toArray(), timeout(20_000)));
    const accepted = records
      .map((record) => flashblockRecordSchema.parse(JSON.parse(record.value)))
      .map((record) => `${Number(record.blockNumber)}/${record.index}`);
    expect(accepted).toEqual(['10/0', '10/1', '10/2', '10/3', '10/4', '11/0', '11/1', '13/0', '13/1', '13/2', '13/3', '13/4']);
    await eventually(async () =>
      (await metricValue(ctx, 'flashlog_ingest_rejected_total', { reason: 'dropped_block' })) >= 2 ? true : undefined,
    );
    const reasons = Object.fromEntries(
      await Promise.all(
        ['duplicate', 'gap', 'bad_first_index', 'dropped_block', 'brotli', 'oversized', 'json', 'missed_block'].map(async (reason) => [
          reason,
          await metricValue(ctx, 'flashlog_ingest_rejected_total', { reason }),
        ]),
      ),
    );
    expect(reasons).toEqual({
      duplicate: 1,
      gap: 1,
      bad_first_index: 1,
      dropped_block: 2,
      brotli: 1,
      oversized: 1,
      json: 1,
      missed_block: 1,
    });
    expect(await metricValue(ctx, 'flashlog_ws_disconnects_total')).toBeGreaterThanOrEqual(1);
    expect(server.connections).toBeGreaterThanOrEqual(2);
    // Nothing more was written than what was accepted.
    expect((await log.endOffsets(topics.flashblocks))[0]!.offset).toBe(12n);
  });

  it('merges two upstreams carrying the same feed and keeps each flashblock once', async () => {
    const script = () => [...blockOf(20), ...blockOf(21)].map(frame);
    const [first, second] = [await startFeedServer(script), await startFeedServer(script)];
    cleanups.push(
      () => first.close(),
      () => second.close(),
    );
    const { log, ctx } = await setup([first.url, second.url]);
    await Promise.all([first.played(), second.played()]);
    await eventually(async () => ((await metricValue(ctx, 'flashlog_ingest_frames_total')) === 20 ? true : undefined));
    await eventually(async () => ((await log.endOffsets(topics.blocks))[0]!.offset === 10n ? true : undefined));
    expect((await log.endOffsets(topics.flashblocks))[0]!.offset).toBe(10n);
    expect(await metricValue(ctx, 'flashlog_ingest_rejected_total', { reason: 'duplicate' })).toBe(10);
  });
});
