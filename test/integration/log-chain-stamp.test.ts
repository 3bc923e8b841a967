import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLogChain, LogChainMismatchError, readChainStamp, stampChain } from '../../src/log/chain-stamp.ts';
import type { ChainIdentity } from '../../src/records/meta.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log } from '../../src/log/port.ts';
import { withTopicPrefix } from '../../src/log/topic-prefix.ts';
import { allTopics, topics } from '../../src/records/topics.ts';
import { kafkaBrokers, tempDir } from '../helpers/context.ts';

/**
 * The chain stamp on both engines (flashlog.meta, src/log/chain-stamp.ts): the first stamp wins for
 * good, under the topic prefix; a log of another chain is refused with both chains and the place
 * named; a writer stamps a log that has none, a reader never does. Each case reopens the same log
 * (a restart), as a process does.
 */
const dir = tempDir();
afterAll(() => dir.remove());

interface Engine {
  readonly name: string;
  /** The same log again on every call, under its own prefix. */
  open(prefix: string): Log;
}
const engines: Engine[] = [
  { name: 'embedded', open: (prefix) => withTopicPrefix(createEmbeddedLog({ path: join(dir.path, 'stamp.db') }), prefix) },
  {
    name: 'kafka',
    open: (prefix) => withTopicPrefix(createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-stamp-test' }), prefix),
  },
];

const chainA: ChainIdentity = { chainId: 1337n, genesisHash: `0x${'a1'.repeat(32)}` };
const chainB: ChainIdentity = { chainId: 1337n, genesisHash: `0x${'b2'.repeat(32)}` };
const place = { description: 'in ./somewhere', remedy: 'do something else' };

async function withLog<T>(engine: Engine, prefix: string, work: (log: Log) => Promise<T>): Promise<T> {
  const log = engine.open(prefix);
  try {
    await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1 })));
    return await work(log);
  } finally {
    await log.close();
  }
}

describe.each(engines)('chain stamp: $name', (engine) => {
  const run = `stamp.${randomUUID().slice(0, 8)}`;

  it('a new log: readers leave it unstamped, the first writer stamps it, and it stays stamped', async () => {
    const prefix = `${run}.new.`;
    await withLog(engine, prefix, async (log) => {
      expect(await checkLogChain(log, { expected: chainA, expectedFrom: 'the node', writer: false, place })).toEqual({
        kind: 'unstamped',
        hadRecords: false,
      });
      expect(await readChainStamp(log)).toBeNull();
      expect(await checkLogChain(log, { expected: chainA, expectedFrom: 'the node', writer: true, place })).toEqual({
        kind: 'stamped',
        chain: chainA,
        hadRecords: false,
      });
    });
    // Restarted: the stamp is read back from the log itself.
    await withLog(engine, prefix, async (log) => {
      expect(await readChainStamp(log)).toEqual(chainA);
      expect(await checkLogChain(log, { expected: chainA, expectedFrom: 'the node', writer: true, place })).toEqual({
        kind: 'same',
        chain: chainA,
      });
      expect(await checkLogChain(log, { expected: null, expectedFrom: 'the node', writer: true, place })).toEqual({
        kind: 'unchecked',
        stamp: chainA,
      });
      expect((await log.endOffsets(topics.meta)).map((end) => end.offset)).toEqual([1n]);
    });
    // Another prefix on the same engine is another log.
    await withLog(engine, `${run}.other.`, async (log) => expect(await readChainStamp(log)).toBeNull());
  }, 60_000);

  it('a log of another chain is refused, by readers and writers, with both chains and the place in one line', async () => {
    const prefix = `${run}.mismatch.`;
    await withLog(engine, prefix, (log) => stampChain(log, chainA));
    for (const writer of [true, false]) {
      const error = await withLog(engine, prefix, (log) =>
        checkLogChain(log, { expected: chainB, expectedFrom: 'the node at http://b', writer, place }).then(
          () => undefined,
          (caught: unknown) => caught,
        ),
      );
      expect(error).toBeInstanceOf(LogChainMismatchError);
      const message = (error as Error).message;
      expect(message).toBe(
        `the log in ./somewhere holds chain id 1337, genesis ${chainA.genesisHash}, but the node at http://b is chain id 1337, genesis ${chainB.genesisHash}; do something else`,
      );
      expect(message).not.toContain('\n');
    }
    await withLog(engine, prefix, async (log) => expect(await readChainStamp(log)).toEqual(chainA));
  }, 60_000);

  it('two writers stamping a new log at once: the first stamp wins for both', async () => {
    const prefix = `${run}.race.`;
    const [a, b] = await Promise.all([
      withLog(engine, prefix, (log) => stampChain(log, chainA)),
      withLog(engine, prefix, (log) => stampChain(log, chainB)),
    ]);
    expect(a).toEqual(b);
    expect([chainA, chainB]).toContainEqual(a);
    await withLog(engine, prefix, async (log) => expect(await readChainStamp(log)).toEqual(a));
  }, 60_000);

  it('a log made before stamps (records, no stamp) is stamped by a writer and says it had records', async () => {
    const prefix = `${run}.older.`;
    await withLog(engine, prefix, (log) => log.produce([{ topic: topics.blocks, key: '1', value: '{}' }]));
    await withLog(engine, prefix, async (log) => {
      expect(await checkLogChain(log, { expected: chainA, expectedFrom: 'the node', writer: false, place })).toEqual({
        kind: 'unstamped',
        hadRecords: true,
      });
      expect(await checkLogChain(log, { expected: chainA, expectedFrom: 'the node', writer: true, place })).toEqual({
        kind: 'stamped',
        chain: chainA,
        hadRecords: true,
      });
    });
  }, 60_000);
});
