import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log, LogRecord } from '../../src/log/port.ts';
import { topics } from '../../src/records/topics.ts';
import { zeroHash } from '../../src/prover/enclave/core.ts';
import { proofReplyRecordSchema } from '../../src/records/proofs.ts';
import { proofRequestToWire, type ProofRequest } from '../../src/prover/request.ts';
import { eventually, kafkaBrokers } from '../helpers/context.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { buildHeaderChain, serveHeaderChain, type HeaderChainServer, type TestBlock } from '../helpers/header-chain.ts';
import { freePort, managed, report, rssMiB, sleep, stopAll, type Managed } from './harness.ts';

/**
 * Scenario 8, the proof path with every part a real process on the Kafka broker: `flashlog
 * enclave` (local mode, each proof held 2 s so it can be killed in the middle), `flashlog
 * prover-host`, `flashlog prover-bridge`. The enclave is SIGKILLed mid-proof, then the bridge.
 */
const run = randomUUID().slice(0, 8);
const group = `chaos-prover-${run}`;
const brokers = kafkaBrokers();
let l1: EdrChain;
let l2: HeaderChainServer;
let l2Blocks: TestBlock[];
let l1Head: { hash: Hex; number: number };
let enclave: Managed;
let enclaveUrl: string;
let host: Managed;
let bridge: Managed;
let log: Log;
const replies: LogRecord[] = [];

beforeAll(async () => {
  l2Blocks = buildHeaderChain({ length: 30, seed: `chaos-${run}` });
  [l1, l2] = await Promise.all([startEdrChain(), serveHeaderChain(l2Blocks, 1337)]);
  const head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
  l1Head = { hash: head.hash, number: Number(BigInt(head.number)) };
  enclaveUrl = `tcp://127.0.0.1:${await freePort()}`;
  enclave = managed(['enclave', '--listen', enclaveUrl, '--no-metrics', '--prove-delay-ms', '2000', '--enclave-check', 'headers']);
  await enclave.current.waitFor((line) => line.msg === 'enclave listening');
  host = managed([
    'prover-host',
    '--l1-rpc',
    l1.url,
    '--l2-rpc',
    l2.url,
    '--enclave',
    enclaveUrl,
    '--port',
    '0',
    '--no-metrics',
    '--enclave-check',
    'headers',
  ]);
  const hostUrl = String((await host.current.waitFor((line) => line.msg === 'prover host listening')).url);

  // The shared broker keeps other runs' requests: this group starts at today's end of the topic.
  log = createKafkaLog({ brokers, clientId: `chaos-prover-${run}` });
  await log.ensureTopics([{ name: topics.proofRequests }, { name: topics.proofReplies }]);
  const admin = new Kafka({ brokers, clientId: `chaos-prover-admin-${run}`, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topics.proofRequests);
  await admin.setOffsets({
    groupId: group,
    topic: topics.proofRequests,
    partitions: ends.map((end) => ({ partition: end.partition, offset: end.high })),
  });
  await admin.disconnect();
  bridge = managed([
    'prover-bridge',
    '--kafka-brokers',
    brokers.join(','),
    '--group',
    group,
    '--prover-url',
    hostUrl,
    '--prover-concurrency',
    '2',
    '--no-metrics',
    '--kafka-client-id',
    `chaos-bridge-${run}`,
  ]);
  await bridge.current.waitFor((line) => line.msg === 'prover bridge consuming', 60_000);
  const replyEnds = await log.endOffsets(topics.proofReplies);
  log.consumer({ topics: [topics.proofReplies], from: 'latest', seek: replyEnds }).records$.subscribe((record) => replies.push(record));
}, 120_000);

afterAll(async () => {
  await stopAll();
  await log?.close();
  await l2?.close();
  await l1?.close();
}, 60_000);

const request = (agreed: number, claimed: number): ProofRequest => ({
  l1Head: l1Head.hash,
  agreedL2HeadHash: l2Blocks[agreed]!.hash,
  agreedL2OutputRoot: l2Blocks[agreed]!.outputRoot,
  claimedL2OutputRoot: l2Blocks[claimed]!.outputRoot,
  claimedL2BlockNumber: claimed,
  proposer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  intermediateBlockInterval: 1,
  l1HeadNumber: l1Head.number,
  imageHash: zeroHash,
});
async function send(req: ProofRequest): Promise<string> {
  const requestId = randomUUID();
  await log.produce([
    {
      topic: topics.proofRequests,
      key: requestId,
      value: JSON.stringify({ v: 1, requestId, replyTopic: topics.proofReplies, request: proofRequestToWire(req) }),
    },
  ]);
  return requestId;
}
const repliesTo = (requestId: string) =>
  replies.filter((record) => record.key === requestId).map((record) => proofReplyRecordSchema.parse(JSON.parse(record.value)));

describe('scenario 8: prover faults', () => {
  it('an enclave SIGKILLed mid-proof gives an error reply on the reply topic; the next request succeeds; a bridge SIGKILLed with a request in flight replies exactly once after restart', async () => {
    const rssBefore = rssMiB(bridge.pid);
    // 1. The enclave dies in the middle of a proof.
    const doomed = await send(request(10, 11));
    await host.current.waitFor((line) => line.msg === 'proving' && line.claimed === 11, 60_000);
    await sleep(500);
    await enclave.kill('SIGKILL');
    const enclaveKilledAt = Date.now();
    const [failure] = await eventually(
      () => (repliesTo(doomed).length ? repliesTo(doomed) : undefined),
      60_000,
      'the reply to the killed proof',
    );
    expect(failure!.error?.code).toBe(-32000);
    expect(failure!.error?.message).toContain(`enclave ${enclaveUrl}`);
    enclave.restart();
    await enclave.current.waitFor((line) => line.msg === 'enclave listening');
    const next = await send(request(11, 12));
    const [success] = await eventually(
      () => (repliesTo(next).length ? repliesTo(next) : undefined),
      60_000,
      'the reply after the enclave restart',
    );
    const enclaveRecoveryMs = Date.now() - enclaveKilledAt;
    expect(success!.error).toBeUndefined();
    expect(success!.result).toBeDefined();

    // 2. The bridge dies with a request in flight (the enclave holds it 2 s).
    const inFlight = await send(request(12, 14));
    await host.current.waitFor((line) => line.msg === 'proving' && line.claimed === 14, 60_000);
    await bridge.kill('SIGKILL');
    const bridgeKilledAt = Date.now();
    bridge.restart();
    await bridge.current.waitFor((line) => line.msg === 'prover bridge consuming', 60_000);
    await eventually(
      () => (repliesTo(inFlight).length ? true : undefined),
      90_000,
      'the reply to the in-flight request after the bridge restart',
    );
    const bridgeRecoveryMs = Date.now() - bridgeKilledAt;
    // Leave time for a second reply to appear if the request were proven twice.
    await sleep(6000);
    const answers = repliesTo(inFlight);
    const rssAfter = rssMiB(bridge.pid);
    report({
      scenario: '8 prover faults',
      load: '3 proof requests (each held 2 s by the enclave), Kafka request/reply topics',
      faults: 'enclave SIGKILL mid-proof; bridge SIGKILL with a request in flight',
      lost: answers.length === 0 ? 1 : 0,
      duplicates: Math.max(0, answers.length - 1),
      recoveryMs: `enclave ${enclaveRecoveryMs} (kill to next proof); bridge ${bridgeRecoveryMs} (kill to reply)`,
      rssBeforeMiB: rssBefore,
      rssAfterMiB: `${rssAfter} (restarted bridge)`,
      notes: `killed proof answered ${failure!.error?.code} "${failure!.error?.message.slice(0, 60)}"`,
    });
    expect(answers, 'replies to the request in flight when the bridge died').toHaveLength(1);
    expect(answers[0]!.error).toBeUndefined();
  }, 240_000);
});
