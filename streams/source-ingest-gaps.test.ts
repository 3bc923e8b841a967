import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/errors.ts';
import { chainRecordSchema } from '../src/records/chain.ts';
import { topics } from '../src/records/topics.ts';
import type { SourceEvent } from '../src/source/port.ts';
import { readTopic } from '../test/helpers/execution-harness.ts';
import { testContext } from '../test/helpers/context.ts';
import { counterValue, openMemoryLog, unichainBlock } from '../test/helpers/source-ingest.ts';
import { createSourceIngest } from './source-ingest.ts';

describe('the ingest topology and blocks it cannot fill', () => {
  it('a gap event is a gap record on flashlog.chain, a metric by reason and one warning; the log after it reads back as the blocks tail', async () => {
    const ctx = testContext();
    const log = await openMemoryLog();
    const events$ = new Subject<SourceEvent>();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'blocks', events$ } });
    const done = ingest.run();
    events$.next({ type: 'gap', from: 101n, to: 399n, reason: 'beyond_max_backfill' });
    events$.complete();
    await done;
    const chain = (await readTopic(log, topics.chain)).map((record) => ({
      key: record.key,
      value: chainRecordSchema.parse(JSON.parse(record.value)),
    }));
    expect(chain).toEqual([
      { key: '101', value: { v: 1, type: 'gap', blockNumber: '0x65', fromBlock: '0x65', toBlock: '0x18f', reason: 'beyond_max_backfill' } },
    ]);
    expect(await counterValue(ctx, 'flashlog_ingest_gaps_total', { reason: 'beyond_max_backfill' })).toBe(1);
    expect(await counterValue(ctx, 'flashlog_ingest_gap_blocks_total', { reason: 'beyond_max_backfill' })).toBe(299);
    await log.close();
  });
});

describe('the ingest topology and a source that stops on another chain', () => {
  it('what was published before the source failed is on the log, and run() rejects with the error', async () => {
    const ctx = testContext();
    const log = await openMemoryLog();
    const events$ = new Subject<SourceEvent>();
    const ingest = createSourceIngest(ctx, { log, source: { kind: 'blocks', events$ } });
    const done = ingest.run();
    const { block } = unichainBlock();
    events$.next({ type: 'grew', block, receipts: null, receivedAt: Date.now() });
    events$.error(new ConfigError('the log in ./data holds chain id 1, genesis 0xaa, but the node is chain id 1, genesis 0xbb'));
    await expect(done).rejects.toThrow(/genesis 0xaa, but the node is chain id 1, genesis 0xbb/);
    expect((await readTopic(log, topics.blocks)).map((record) => record.key)).toEqual([block.blockNumber.toString()]);
    await log.close();
  });
});
