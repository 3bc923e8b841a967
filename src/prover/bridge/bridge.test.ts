import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../log/embedded/embedded.ts';
import type { Log, LogRecord } from '../../log/port.ts';
import { createMetricsRegistry } from '../../obs/metrics.ts';
import { proofReplyRecordSchema } from '../../records/proofs.ts';
import { eventually } from '../../../test/helpers/context.ts';
import { createProofBridge, type ProofBridge } from './bridge.ts';
import type { ProveOutcome } from './host-client.ts';

/**
 * The bridge on an in-memory embedded log with a prover that answers at once: replies keyed by
 * request id on the request's reply topic, a refused record answered with -32602 naming the field,
 * a request whose handling failed answered after a retry, and the commit past each answered record.
 * (Both log engines, long proofs and redelivery: test/integration/prover-bridge.test.ts.)
 */
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const proofRequest = (claimed: number) => ({
  l1_head: hash(1),
  agreed_l2_head_hash: hash(2),
  agreed_l2_output_root: hash(3),
  claimed_l2_output_root: hash(claimed),
  claimed_l2_block_number: claimed,
});
const requestTopic = 'requests';
const replyTopic = 'replies';

const open: { bridge: ProofBridge; log: Log }[] = [];
afterEach(async () => {
  for (const { bridge, log } of open.splice(0)) {
    await bridge.stop();
    await log.close();
  }
});

async function setUp(topicNames: string[], wrap: (log: Log) => Log = (log) => log) {
  const inner = createEmbeddedLog({ path: ':memory:' });
  await inner.ensureTopics(topicNames.map((name) => ({ name })));
  const log = wrap(inner);
  const metrics = createMetricsRegistry({ defaults: false });
  const proved: number[] = [];
  const prove = async (request: unknown): Promise<ProveOutcome> => {
    const claimed = (request as { claimed_l2_block_number: number }).claimed_l2_block_number;
    proved.push(claimed);
    return { error: { code: -32000, message: `scripted answer for block ${claimed}` } };
  };
  const bridge = createProofBridge({ log, group: 'g', concurrency: 2, requestTopic, replyTopic, prove, metrics, failureRetryMs: 5 });
  open.push({ bridge, log: inner });
  await bridge.start();
  return { log, bridge, metrics, proved };
}

async function readReplies(log: Log, topic: string, count: number): Promise<LogRecord[]> {
  const consumer = log.consumer({ topics: [topic], from: 'earliest' });
  const seen: LogRecord[] = [];
  const subscription = consumer.records$.subscribe((record) => seen.push(record));
  try {
    return await eventually(() => (seen.length >= count ? [...seen] : undefined), 10_000, `${count} replies on ${topic}`);
  } finally {
    subscription.unsubscribe();
    await consumer.close();
  }
}

const committedOffset = async (metrics: ReturnType<typeof createMetricsRegistry>) =>
  (await metrics.getSingleMetric('flashlog_prover_bridge_committed_offset')!.get()).values.find((v) => v.labels.partition === '0')?.value;

describe('the proof bridge', () => {
  it('answers each request under its id, refuses a malformed one naming the field, and commits past both', async () => {
    const { log, metrics, proved } = await setUp([requestTopic, replyTopic]);
    await log.produce([
      { topic: requestTopic, key: 'a', value: JSON.stringify({ v: 1, requestId: 'a', replyTopic, request: proofRequest(12) }) },
      {
        topic: requestTopic,
        key: 'b',
        value: JSON.stringify({ v: 1, requestId: 'b', replyTopic, request: { claimed_l2_block_number: 'x' } }),
      },
    ]);
    const replies = await readReplies(log, replyTopic, 2);
    const byKey = new Map(replies.map((record) => [record.key, proofReplyRecordSchema.parse(JSON.parse(record.value))]));
    expect(byKey.get('a')).toMatchObject({ requestId: 'a', error: { code: -32000, message: 'scripted answer for block 12' } });
    expect(byKey.get('b')).toMatchObject({ requestId: 'b', error: { code: -32602 } });
    expect((byKey.get('b') as { error: { message: string } }).error.message).toMatch(/^request record\.request\./);
    expect(proved).toEqual([12]);
    expect(await eventually(async () => ((await committedOffset(metrics)) === 2 ? 2 : undefined))).toBe(2);
  });

  it('a request whose handling fails (the log unreachable for listTopics) is answered after a retry, then committed', async () => {
    let refusals = 1;
    const failingOnce = (log: Log): Log =>
      Object.assign(Object.create(log) as Log, {
        listTopics: async () => {
          if (refusals-- > 0) throw new Error('broker unreachable');
          return log.listTopics();
        },
      });
    const other = 'other-replies';
    const { log, bridge, metrics } = await setUp([requestTopic, replyTopic, other], failingOnce);
    await log.produce([
      { topic: requestTopic, key: 'c', value: JSON.stringify({ v: 1, requestId: 'c', replyTopic: other, request: proofRequest(13) }) },
    ]);
    const [reply] = await readReplies(log, other, 1);
    expect(reply!.key).toBe('c');
    expect(refusals).toBe(-1); // listTopics was refused once, then asked again
    expect(await eventually(async () => ((await committedOffset(metrics)) === 1 ? 1 : undefined))).toBe(1);
    expect(bridge.stats().taken).toBe(1);
  });
});
