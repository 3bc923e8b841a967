import { initialSequencerState, step } from '../../src/chain/sequencer.ts';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { allTopics } from '../../src/records/topics.ts';
import { decodeFrame } from '../../src/wire/frame.ts';
import type { testContext } from './context.ts';
import { loadFixture } from './feed-server.ts';

/** The ingest topology's unit tests (streams/source-ingest*.test.ts): a counter's value, a log in memory, a real block. */
export async function counterValue(
  ctx: ReturnType<typeof testContext>,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = ctx.metrics.getSingleMetric(name);
  const data = metric ? await metric.get() : { values: [] };
  const matches = (sample: { labels: Record<string, unknown> }) => Object.entries(labels).every(([k, v]) => sample.labels[k] === v);
  return data.values.find((sample) => matches(sample as never))?.value ?? 0;
}

export async function openMemoryLog() {
  const log = createEmbeddedLog({ path: ':memory:' });
  await log.ensureTopics(allTopics.map((name) => ({ name, partitions: 1, retentionMs: -1, replication: 1 })));
  return log;
}

/** The first flashblock of the real Unichain Sepolia block, assembled. */
export function unichainBlock() {
  const [first] = loadFixture('unichain-sepolia-35535698.json');
  const decoded = decodeFrame(JSON.stringify(first), { maxBytes: 16 * 1024 * 1024 });
  if (!decoded.ok) throw new Error(decoded.detail);
  const accepted = step(initialSequencerState(), { type: 'flashblock', flashblock: decoded.flashblock }).events[0];
  if (accepted?.type !== 'accepted') throw new Error('not accepted');
  return { block: accepted.block, message: decoded.json };
}
