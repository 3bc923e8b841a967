import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { keccak256, toHex, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import { withTopicPrefix } from '../../src/log/topic-prefix.ts';
import type { Log } from '../../src/log/port.ts';
import { allTopics, topics } from '../../src/records/topics.ts';
import { createProofBridge } from '../../src/prover/bridge/bridge.ts';
import { proofRequestToWire } from '../../src/prover/request.ts';
import { eventually, kafkaBrokers, tempDir } from '../helpers/context.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * Issue 16: an indexer outside JavaScript. `flashlog run --devnet` writes flashblocks, blocks,
 * logs and chain records (sealed and reorg, `--reorg-every 2`) to the real broker, a proof request
 * gets its reply from the prover bridge, and a Python process (confluent-kafka, i.e. librdkafka)
 * reads every record written meanwhile and validates it against schemas/TOPIC.schema.json with
 * the `jsonschema` package. The Python environment comes from PyPI (test/python/setup.sh).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const run = randomUUID().slice(0, 8);
const brokers = kafkaBrokers();
const privateRequests = `python.${run}.requests`;
// A topic prefix of its own: each run is a new devnet chain, and a log holds one chain.
const prefix = `python.${run}.`;
let python: string;
let log: Log;
let flashlog: FlashlogProcess | undefined;
const dir = tempDir();

type Offsets = Record<string, Record<string, number>>;
async function endOffsets(): Promise<Offsets> {
  const out: Offsets = {};
  for (const topic of allTopics) {
    out[topic] = Object.fromEntries((await log.endOffsets(topic)).map((end) => [String(end.partition), Number(end.offset)]));
  }
  return out;
}
const grown = (before: Offsets, after: Offsets, topic: string) =>
  Object.entries(after[topic] ?? {}).reduce((sum, [partition, end]) => sum + end - (before[topic]?.[partition] ?? 0), 0);

beforeAll(async () => {
  python = execFileSync('bash', [`${root}test/python/setup.sh`], { encoding: 'utf8' }).trim();
  log = withTopicPrefix(createKafkaLog({ brokers, clientId: `python-consumer-${run}` }), prefix);
  await log.ensureTopics([...allTopics.map((name) => ({ name })), { name: privateRequests }]);
}, 300_000);

afterAll(async () => {
  await flashlog?.stop();
  await log?.close();
  dir.remove();
});

describe('a Python indexer (confluent-kafka + jsonschema)', () => {
  it('reads every topic from the broker and every record matches its JSON Schema', async () => {
    const before = await endOffsets();
    flashlog = spawnFlashlog([
      'run',
      '--devnet',
      '--kafka-brokers',
      brokers.join(','),
      '--topic-prefix',
      prefix,
      '--kafka-client-id',
      `python-run-${run}`,
      '--data-dir',
      dir.path,
      '--port',
      '0',
      '--no-metrics',
      '--load',
      '20',
      '--reorg-every',
      '2',
      '--log-level',
      'info',
    ]);
    await flashlog.waitFor((line) => line.msg === 'gateway listening', 60_000);

    // A proof request on flashlog.proofs.requests, and its reply from the prover bridge. The
    // bridge reads a copy on a private topic, so no other test's request gets this bridge's answer.
    const requestId = `python-${run}`;
    const hash = (label: string): Hex => keccak256(toHex(`${run}-${label}`));
    const request = {
      v: 1,
      requestId,
      replyTopic: topics.proofReplies,
      requestedAt: Date.now(),
      request: proofRequestToWire({
        l1Head: hash('l1'),
        agreedL2HeadHash: hash('agreed'),
        agreedL2OutputRoot: hash('agreed-root'),
        claimedL2OutputRoot: hash('claimed-root'),
        claimedL2BlockNumber: 12,
        proposer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        intermediateBlockInterval: 2,
        l1HeadNumber: 7,
        imageHash: `0x${'00'.repeat(32)}`,
      }),
    };
    await log.produce([
      { topic: topics.proofRequests, key: requestId, value: JSON.stringify(request) },
      { topic: privateRequests, key: requestId, value: JSON.stringify(request) },
    ]);
    const bridge = createProofBridge({
      log,
      group: `python-${run}`,
      concurrency: 1,
      requestTopic: privateRequests,
      prove: async () => ({ error: { code: -32000, message: 'no enclave in this test' } }),
    });
    await bridge.start();
    // (The bridge also keeps the replies it re-read at start: wait for the reply topic to grow.)
    await eventually(async () => (grown(before, await endOffsets(), topics.proofReplies) > 0 ? true : undefined), 30_000, 'the reply');
    await bridge.stop();

    // Enough blocks for sealed and reorg records (every second block is reorged). The chain topic
    // also gets safe/finalized records from the start, so count flashblocks too: 40 is eight
    // blocks of five, well past the first seals and reorgs (canonical heads are polled).
    await eventually(
      async () => {
        const now = await endOffsets();
        return grown(before, now, topics.flashblocks) >= 40 && grown(before, now, topics.logs) > 0 && grown(before, now, topics.chain) >= 8
          ? true
          : undefined;
      },
      90_000,
      'eight blocks of flashblocks, their logs, and chain records',
    );
    await flashlog.stop();
    const after = await endOffsets();

    const ranges = Object.fromEntries(
      allTopics.map((topic) => [
        topic,
        Object.fromEntries(Object.entries(after[topic]!).map(([partition, end]) => [partition, [before[topic]?.[partition] ?? 0, end]])),
      ]),
    );
    const output = execFileSync(
      python,
      [`${root}test/python/validate_topics.py`, brokers.join(','), `${root}schemas`, JSON.stringify(ranges), prefix],
      { encoding: 'utf8', timeout: 90_000 },
    );
    const summary = JSON.parse(output) as Record<
      string,
      { records: number; invalid: string[]; keys: number; types: Record<string, number> }
    > & { _unread: string[] };

    expect(summary._unread).toEqual([]);
    for (const topic of allTopics) {
      expect(summary[topic]!.records, `${topic}: records read by Python`).toBe(grown(before, after, topic));
      expect(summary[topic]!.records, `${topic}: records read by Python`).toBeGreaterThan(0);
      expect(summary[topic]!.invalid, `${topic}: records failing the JSON Schema`).toEqual([]);
    }
    expect(summary[topics.chain]!.types.sealed).toBeGreaterThan(0);
    expect(summary[topics.chain]!.types.reorg).toBeGreaterThan(0);
    expect(summary[topics.proofReplies]!.types.error).toBeGreaterThan(0);
  }, 240_000);
});
