import { join } from 'node:path';
import { tap } from 'rxjs';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log, LogRecord, ProduceRecord } from '../../src/log/port.ts';
import { allTopics, topics } from '../../src/records/topics.ts';
import { apply, initialViewState, type ViewState } from '../../src/view/state.ts';
import { materialize } from '../../streams/materialize.ts';
import { eventually, kafkaBrokers, metricValue, tempDir, testContext } from '../helpers/context.ts';
import { prefixedLog } from '../helpers/prefixed-log.ts';
import { blockBuilder, chainRecord, signedTransfers } from '../helpers/view-records.ts';

/**
 * The view's replay defers block records (src/view/replay.ts). Over a real log (embedded, and Kafka
 * read by the replay worker), written as the bench writes it (blocks of 10 flashblocks x 2
 * transactions x 4 logs) with sealed records a block behind, a late reorg record, a rebuilt block,
 * a duplicate and invalid records, ending mid-block: the view after the replay, and after records
 * appended live, is the state of applying every record in the order the log delivered them.
 * (Read topic by topic, flashlog.chain runs ahead of flashlog.blocks, so here a reorg record meets
 * no deferred block; src/view/replay.test.ts interleaves the topics every way for that.)
 */
let dir: ReturnType<typeof tempDir>;
let txs: { hash: Hex; raw: Hex }[];
const emitters = Array.from({ length: 5 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Hex);

beforeAll(async () => {
  dir = tempDir('flashlog-view-replay-');
  txs = await signedTransfers(20);
});
afterAll(() => dir?.remove());

function history(from: bigint, to: bigint, endFlashblocks = 10): ProduceRecord[] {
  const records: ProduceRecord[] = [];
  const sealed = (number: bigint) =>
    chainRecord({ type: 'sealed', blockNumber: `0x${number.toString(16)}`, blockHash: `0x${'ab'.repeat(32)}`, transactions: [] });
  for (let number = from; number <= to; number++) {
    const block = blockBuilder(number);
    const flashblocks = number === to ? endFlashblocks : 10;
    for (let fb = 0; fb < flashblocks; fb++) {
      const flashblock = block.flashblock(txs.slice(fb * 2, fb * 2 + 2), { logsPerTx: 4, emitters });
      records.push(...flashblock);
      if (fb === 3 && number % 5n === 0n) records.push(flashblock[0]!); // a duplicate
      if (fb === 6 && number % 7n === 0n) records.push({ ...flashblock[0]!, value: flashblock[0]!.value.replace('"index":', '"index":-') });
      if (fb === 1 && number > from) records.push(sealed(number - 1n));
    }
    if (number % 6n === 0n) {
      // The late reorg of the block before the last sealed one: its later transactions withdrawn.
      records.push(
        chainRecord({
          type: 'reorg',
          blockNumber: `0x${(number - 2n).toString(16)}`,
          blockHash: `0x${'cd'.repeat(32)}`,
          transactions: [txs[0]!.hash],
          removedTransactions: txs.slice(10, 14).map((tx) => tx.hash),
        }),
      );
    }
    if (number % 8n === 0n) records.push(...blockBuilder(number + 1n, { payloadId: '0x00000000000000aa' }).flashblock(txs.slice(0, 2)));
  }
  records.push({ topic: topics.blocks, key: '1', value: '{"v":1,"blockNumber":"0x1"' });
  return records;
}

/** The log, with every record its consumers deliver kept in order. */
function watched(log: Log): { log: Log; delivered: LogRecord[] } {
  const delivered: LogRecord[] = [];
  return {
    delivered,
    log: {
      ...log,
      consumer(options) {
        const consumer = log.consumer(options);
        return { ...consumer, records$: consumer.records$.pipe(tap((record) => delivered.push(record))) };
      },
    },
  };
}

const counts = (state: ViewState) => ({ ...state, applied: 0, invalid: 0, lastInvalid: null });

async function replayEqualsApplyingEverything(log: Log): Promise<void> {
  await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1 })));
  await log.produce(history(1000n, 1029n, 4));
  const { log: seen, delivered } = watched(log);
  const ctx = testContext();
  const view = await materialize(ctx, { log: seen, replayInWorkerFrom: 0 });
  try {
    const replayed = await view.replayed;
    const expected = delivered.reduce((state, record) => apply(state, { type: 'record', record }), initialViewState());
    expect(replayed.records).toBe(delivered.length);
    expect(counts(view.current())).toEqual(counts(expected));
    expect(view.current().applied + view.current().invalid + replayed.skipped).toBe(expected.applied + expected.invalid);
    expect(replayed.skipped).toBeGreaterThan(200);
    expect(await metricValue(ctx, 'flashlog_view_replay_skipped_records_total')).toBe(replayed.skipped);
    expect(view.current().blocks.map((block) => block.number)).toEqual([1029n]);
    expect(view.current().blocks[0]!.index).toBe(3);

    // Live: the rest of block 1029 and more blocks, each record applied as it comes.
    const live = history(1029n, 1033n).filter((record) => record.topic !== topics.blocks || !record.value.includes('"index":0,'));
    await log.produce(live);
    const ends = (await Promise.all([topics.blocks, topics.logs, topics.chain].map((topic) => log.endOffsets(topic)))).flat();
    const state = await eventually(
      () => {
        const current = view.current();
        return ends.every((end) => (current.offsets[`${end.topic}/${end.partition}`] ?? 0n) >= end.offset) ? current : undefined;
      },
      30_000,
      'the live records',
    );
    const all = delivered.reduce((s, record) => apply(s, { type: 'record', record }), initialViewState());
    expect(counts(state)).toEqual(counts(all));
    expect(state.applied + state.invalid + replayed.skipped).toBe(all.applied + all.invalid);
    expect(state.blocks.map((block) => block.number)).toEqual([1033n]);
  } finally {
    await view.close();
  }
}

describe('view replay over a real log', () => {
  it('embedded: the replayed and live view is the state of applying every record delivered', async () => {
    const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
    try {
      await replayEqualsApplyingEverything(log);
    } finally {
      await log.close();
    }
  });

  it('Kafka (replay worker): the replayed and live view is the state of applying every record delivered', async () => {
    const log = prefixedLog(
      createKafkaLog({ brokers: kafkaBrokers(), clientId: 'view-replay-test', maxWaitMs: 50 }),
      `vr${Date.now().toString(36)}-`,
    );
    try {
      await replayEqualsApplyingEverything(log);
    } finally {
      await log.close();
    }
  }, 60_000);
});
