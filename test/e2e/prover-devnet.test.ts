import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Address, Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDevnet, type Devnet } from '../../devnet/edr/devnet.ts';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import { withTopicPrefix } from '../../src/log/topic-prefix.ts';
import type { Log, LogRecord } from '../../src/log/port.ts';
import { topics } from '../../src/records/topics.ts';
import { zeroHash } from '../../src/prover/enclave/core.ts';
import { journalDigest } from '../../src/prover/journal.ts';
import { outputRootV0 } from '../../src/prover/output-root.ts';
import { proofReplyRecordSchema, type ProofReplyRecord } from '../../src/records/proofs.ts';
import { proofRequestToWire, proofResultFromWire, type ProofRequest } from '../../src/prover/request.ts';
import { recoverSigner } from '../../src/prover/signature.ts';
import { eventually, kafkaBrokers } from '../helpers/context.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { spawnFlashlog, startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { rpcCall } from '../helpers/prover-fixture.ts';
import { devnetScheduleId } from '../helpers/schedule.ts';

/**
 * End to end with the devnet as L2 (EDR, OP chain type, Isthmus, chain 1337) and a second local
 * EDR chain as L1 carrying the signer registry; two real enclave processes behind a real
 * prover-host process with --registry, a real prover-bridge process, a real Kafka broker. The
 * enclaves re-execute every block of each range from the witness the host collects from the
 * devnet (prestate traces, eth_getProof, code, transactions).
 */
const run = randomUUID().slice(0, 8);
const group = `e2e-devnet-prover-${run}`;
// This run's own topics and group on the shared broker (--topic-prefix), apart from other tests' bridges.
const prefix = `e2e-devnet-prover-${run}.`;
const brokers = kafkaBrokers();
let devnet: Devnet;
let l1: EdrChain;
let l1Head: { hash: Hex; number: number };
let enclaves: { process: FlashlogProcess; url: string; signer: string }[];
let host: FlashlogProcess;
let hostUrl: string;
let bridge: FlashlogProcess;
let log: Log;
const replies: LogRecord[] = [];
const l2 = new Map<number, { hash: Hex; outputRoot: Hex }>();

beforeAll(async () => {
  [devnet, l1] = await Promise.all([createDevnet({ rpcPort: 0, wsPort: 0, blockTimeMs: 300 }), startEdrChain()]);
  const head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
  l1Head = { hash: head.hash, number: Number(BigInt(head.number)) };
  const call = rpcCall(devnet.rpcUrl);
  await eventually(
    async () => (Number(BigInt((await call('eth_blockNumber', [])) as Hex)) >= 8 ? true : undefined),
    30_000,
    'devnet block 8',
  );
  // Isthmus: the header's withdrawalsRoot is the message passer's storage root; check it against eth_getProof.
  for (let n = 0; n <= 8; n++) {
    const block = (await call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])) as {
      hash: Hex;
      stateRoot: Hex;
      withdrawalsRoot: Hex;
    };
    const proof = (await call('eth_getProof', ['0x4200000000000000000000000000000000000016', [], `0x${n.toString(16)}`])) as {
      storageHash: Hex;
    };
    expect(block.withdrawalsRoot).toBe(proof.storageHash);
    l2.set(n, { hash: block.hash, outputRoot: outputRootV0(block.stateRoot, block.withdrawalsRoot, block.hash) });
  }
  enclaves = await Promise.all([startEnclaveProcess(), startEnclaveProcess()]);
  // By default an enclave proves by re-executing every block of the range from the host's witness.
  for (const enclave of enclaves)
    expect(enclave.process.lines.find((line) => line.msg === 'enclave listening')).toMatchObject({ check: 'reexecute' });
  host = spawnFlashlog([
    'prover-host',
    '--l1-rpc',
    l1.url,
    '--l2-rpc',
    devnet.rpcUrl,
    '--enclave',
    enclaves[0]!.url,
    '--enclave',
    enclaves[1]!.url,
    '--registry',
    l1.registry,
    '--port',
    '0',
    '--no-metrics',
  ]);
  const listening = await host.waitFor((line) => line.msg === 'prover host listening');
  expect(listening).toMatchObject({ chainId: 1337, registry: l1.registry });
  hostUrl = String(listening.url);

  log = withTopicPrefix(createKafkaLog({ brokers, clientId: `e2e-devnet-prover-${run}` }), prefix);
  await log.ensureTopics([{ name: topics.proofRequests }, { name: topics.proofReplies }]);
  const admin = new Kafka({ brokers, clientId: `e2e-devnet-admin-${run}`, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(`${prefix}${topics.proofRequests}`);
  await admin.setOffsets({
    groupId: `${prefix}${group}`,
    topic: `${prefix}${topics.proofRequests}`,
    partitions: ends.map((end) => ({ partition: end.partition, offset: end.high })),
  });
  await admin.disconnect();
  bridge = spawnFlashlog([
    'prover-bridge',
    '--kafka-brokers',
    brokers.join(','),
    '--group',
    group,
    '--prover-url',
    hostUrl,
    '--no-metrics',
    '--kafka-client-id',
    `e2e-devnet-bridge-${run}`,
    '--topic-prefix',
    prefix,
  ]);
  await bridge.waitFor((line) => line.msg === 'prover bridge consuming', 60_000);
  const replyEnds = await log.endOffsets(topics.proofReplies);
  log.consumer({ topics: [topics.proofReplies], from: 'latest', seek: replyEnds }).records$.subscribe((record) => replies.push(record));
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await host?.stop();
  await Promise.all((enclaves ?? []).map((enclave) => enclave.process.stop()));
  await log?.close();
  await devnet?.close();
  await l1?.close();
});

const request = (agreed: number, claimed: number, overrides: Partial<ProofRequest> = {}): ProofRequest => ({
  l1Head: l1Head.hash,
  agreedL2HeadHash: l2.get(agreed)!.hash,
  agreedL2OutputRoot: l2.get(agreed)!.outputRoot,
  claimedL2OutputRoot: l2.get(claimed)!.outputRoot,
  claimedL2BlockNumber: claimed,
  proposer: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65',
  intermediateBlockInterval: 2,
  l1HeadNumber: l1Head.number,
  imageHash: zeroHash,
  ...overrides,
});

async function ask(req: ProofRequest): Promise<ProofReplyRecord> {
  const requestId = randomUUID();
  await log.produce([
    {
      topic: topics.proofRequests,
      key: requestId,
      value: JSON.stringify({ v: 1, requestId, replyTopic: topics.proofReplies, request: proofRequestToWire(req) }),
    },
  ]);
  const record = await eventually(() => replies.find((r) => r.key === requestId), 60_000, `the reply to ${requestId}`);
  return proofReplyRecordSchema.parse(JSON.parse(record.value));
}

async function aggregateSigner(reply: ProofReplyRecord, req: ProofRequest): Promise<Address> {
  const result = proofResultFromWire(reply.result);
  if (result.type !== 'tee') throw new Error('expected Tee');
  const a = result.aggregateProposal;
  const n = result.proposals.length;
  const roots = n === 1 ? [] : result.proposals.filter((_, i) => (i + 1) % req.intermediateBlockInterval === 0).map((p) => p.outputRoot);
  return recoverSigner(
    journalDigest({
      proposer: req.proposer,
      l1OriginHash: a.l1OriginHash,
      prevOutputRoot: a.prevOutputRoot,
      startingL2Block: a.l2BlockNumber - n,
      outputRoot: a.outputRoot,
      endingL2Block: a.l2BlockNumber,
      intermediateRoots: roots,
      configHash: a.configHash,
      teeImageHash: zeroHash,
      scheduleId: devnetScheduleId,
    }),
    a.signature,
  );
}

describe('proofs of devnet blocks, routed by the signer registry', () => {
  it('routes by the registry: NoValidSigner first, then the registered enclave; health latches', async () => {
    const [a, b] = [enclaves[0]!.signer as Address, enclaves[1]!.signer as Address];
    expect((await fetch(`${hostUrl}/healthz`)).status).toBe(500);
    const refused = await ask(request(2, 4));
    expect(refused.error).toEqual({ code: -32001, message: `no valid signer found among: [${a}, ${b}]` });

    await l1.setValidSigner(b, true);
    const req = request(2, 6);
    const proved = await ask(req);
    expect(proved.error).toBeUndefined();
    expect(await aggregateSigner(proved, req)).toBe(b);
    expect(proofResultFromWire(proved.result)).toMatchObject({
      aggregateProposal: { outputRoot: l2.get(6)!.outputRoot, l2BlockNumber: 6 },
    });
    expect((await fetch(`${hostUrl}/healthz`)).status).toBe(200);

    await l1.setValidSigner(b, false);
    expect((await fetch(`${hostUrl}/healthz`)).status).toBe(200);
    expect((await ask(request(2, 3))).error?.code).toBe(-32001);
    await l1.setValidSigner(a, true);
    const again = request(5, 8);
    expect(await aggregateSigner(await ask(again), again)).toBe(a);
  }, 120_000);

  it('refuses a wrong claimed root', async () => {
    const reply = await ask(request(3, 5, { claimedL2OutputRoot: l2.get(4)!.outputRoot }));
    expect(reply.error?.code).toBe(-32000);
    expect(reply.error?.message).toMatch(/^output root mismatch at L2 block 5/);
  }, 60_000);
});
