import { describe, expect, it } from 'vitest';
import { initialSequencerState, step } from '../chain/sequencer.ts';
import { resumeCandidates } from '../chain/resume.ts';
import { blockRecords } from '../records/blocks.ts';
import { allTopics, topics } from '../records/topics.ts';
import { decodeFrame } from '../wire/frame.ts';
import { loadFixture } from '../../test/helpers/feed-server.ts';
import { createEmbeddedLog } from './embedded/embedded.ts';
import { readBlocksTail } from './log-tail.ts';

/** The first flashblock of the real Unichain Sepolia block 35535698, assembled, renumbered as `n` with hash `hash`. */
function blockAt(n: bigint, hash?: `0x${string}`) {
  const [first] = loadFixture('unichain-sepolia-35535698.json');
  const decoded = decodeFrame(JSON.stringify(first), { maxBytes: 16 * 1024 * 1024 });
  if (!decoded.ok) throw new Error(decoded.detail);
  const accepted = step(initialSequencerState(), { type: 'flashblock', flashblock: decoded.flashblock }).events[0];
  if (accepted?.type !== 'accepted') throw new Error('not accepted');
  return { ...accepted.block, blockNumber: n, header: { ...accepted.block.header, ...(hash ? { hash } : {}) } };
}
const h = (digit: string) => `0x${digit.repeat(64)}` as const;

describe('where the log ends (read back for a restart)', () => {
  it('reads the last records of every partition, newest block first, the later record winning at a height', async () => {
    const log = createEmbeddedLog({ path: ':memory:' });
    try {
      await log.ensureTopics(allTopics.map((name) => ({ name, partitions: name === topics.meta ? 1 : 3 })));
      const records = [blockAt(10n, h('a')), blockAt(11n, h('b')), blockAt(12n, h('c')), blockAt(12n, h('d')), blockAt(13n)].flatMap(
        (block) => blockRecords(block, null, null).filter((record) => record.topic === topics.blocks),
      );
      await log.produce(records);
      const tail = await readBlocksTail(log, 64);
      expect(tail).toHaveLength(5);
      expect(resumeCandidates(tail, 3).map((block) => [block.number, block.hash])).toEqual([
        [13n, null],
        [12n, h('d')],
        [11n, h('b')],
      ]);
      // Only the last record of each partition: still the newest per partition.
      const last = await readBlocksTail(log, 1);
      expect(last.length).toBeLessThanOrEqual(3);
      expect(resumeCandidates(last, 1)[0]?.number).toBe(13n);
    } finally {
      await log.close();
    }
  });

  it('an empty log: nothing to resume from', async () => {
    const log = createEmbeddedLog({ path: ':memory:' });
    try {
      await log.ensureTopics(allTopics.map((name) => ({ name })));
      expect(await readBlocksTail(log, 64)).toEqual([]);
    } finally {
      await log.close();
    }
  });
});
