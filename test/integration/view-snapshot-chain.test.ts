import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stampChain } from '../../src/log/chain-stamp.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { allTopics } from '../../src/records/topics.ts';
import { valueDigest } from '../../src/view/snapshot.ts';
import { materialize } from '../../streams/materialize.ts';
import { tempDir, testContext } from '../helpers/context.ts';
import { blockBuilder, signedTransfers } from '../helpers/view-records.ts';

/**
 * The view's snapshot names the chain of the log it was taken from (the log's stamp), and a
 * snapshot naming another chain is not resumed from: the view replays the whole log and says why.
 */
const dir = tempDir('flashlog-snapshot-chain-');
afterAll(() => dir.remove());

describe('view snapshot and the chain of its log', () => {
  it('carries the log’s chain; a snapshot of another chain makes a full replay', async () => {
    const chainA = { chainId: 1337n, genesisHash: `0x${'a1'.repeat(32)}` as const };
    const path = join(dir.path, 'view.snapshot.json');
    const log = createEmbeddedLog({ path: join(dir.path, 'flashlog.db') });
    await log.ensureTopics(allTopics.map((name) => ({ name })));
    await stampChain(log, chainA);
    const txs = await signedTransfers(2);
    const block7 = blockBuilder(7n);
    await log.produce(block7.flashblock([txs[0]!]));
    const start = async () => {
      const ctx = testContext();
      const view = await materialize(ctx, { log, snapshot: { path, intervalMs: 0 } });
      const replayed = await view.replayed;
      return { ctx, view, replayed };
    };
    try {
      const first = await start();
      await first.view.close();
      const envelope = JSON.parse(readFileSync(path, 'utf8')) as { body: string; digest: string };
      expect(JSON.parse(envelope.body).chain).toEqual({ chainId: '0x539', genesisHash: chainA.genesisHash });

      await log.produce(block7.flashblock([txs[1]!]));
      const resumed = await start();
      expect(resumed.replayed.fromSnapshot).toBe(true);
      await resumed.view.close();

      // The same snapshot, naming another chain (its digest made anew, so only the chain differs).
      const snapshot = JSON.parse(readFileSync(path, 'utf8')) as { body: string; digest: string };
      const otherBody = snapshot.body.replace(chainA.genesisHash, `0x${'b2'.repeat(32)}`);
      expect(otherBody).not.toBe(snapshot.body);
      writeFileSync(path, JSON.stringify({ ...snapshot, body: otherBody, digest: valueDigest(otherBody) }));
      const other = await start();
      try {
        expect(other.replayed.fromSnapshot).toBe(false);
        expect(await other.ctx.metrics.getSingleMetricAsString('flashlog_view_snapshot_fallbacks_total')).toContain(
          'reason="other-chain"} 1',
        );
        expect(other.view.current().blocks.map((block) => block.transactions.length)).toEqual([2]);
      } finally {
        await other.view.close();
      }
    } finally {
      await log.close();
    }
  }, 60_000);
});
