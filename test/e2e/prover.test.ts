import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import type { Address, Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import { withTopicPrefix } from '../../src/log/topic-prefix.ts';
import type { Log, LogRecord } from '../../src/log/port.ts';
import { topics } from '../../src/records/topics.ts';
import { zeroHash } from '../../src/prover/enclave/core.ts';
import { journalDigest } from '../../src/prover/journal.ts';
import { proofReplyRecordSchema, type ProofReplyRecord } from '../../src/records/proofs.ts';
import { proofRequestToWire, proofResultFromWire, type ProofRequest } from '../../src/prover/request.ts';
import { recoverSigner } from '../../src/prover/signature.ts';
import { eventually, kafkaBrokers, tempDir } from '../helpers/context.ts';
import { startEdrChain, type EdrChain } from '../helpers/edr-chain.ts';
import { spawnFlashlog, startEnclaveProcess, type FlashlogProcess } from '../helpers/flashlog-process.ts';
import { buildHeaderChain, serveHeaderChain, type HeaderChainServer, type TestBlock } from '../helpers/header-chain.ts';
import { devnetScheduleId } from '../helpers/schedule.ts';

/**
 * End to end over a real Kafka broker, every part a real process: flashlog enclave (local mode),
 * flashlog prover-host, flashlog prover-bridge and flashlog prove. L1 is a local EDR chain, L2 a
 * JSON-RPC server of real RLP headers (chain 1337, the devnet's config hash).
 */
const run = randomUUID().slice(0, 8);
const group = `e2e-prover-${run}`;
// This run's own topics and group on the shared broker (--topic-prefix): other tests' bridges
// on flashlog.proofs.* can't answer its requests, nor it theirs.
const prefix = `e2e-prover-${run}.`;
const brokers = kafkaBrokers();
const dir = tempDir();
let l1: EdrChain;
let l2: HeaderChainServer;
let l2Blocks: TestBlock[];
let l1Head: { hash: Hex; number: number };
let enclave: { process: FlashlogProcess; url: string; signer: string };
let host: FlashlogProcess;
let bridge: FlashlogProcess;
let log: Log;
const replies: LogRecord[] = [];

beforeAll(async () => {
  l2Blocks = buildHeaderChain({ length: 40, seed: `e2e-${run}` });
  [l1, l2] = await Promise.all([startEdrChain(), serveHeaderChain(l2Blocks, 1337)]);
  const head = (await l1.request('eth_getBlockByNumber', ['latest', false])) as { hash: Hex; number: Hex };
  l1Head = { hash: head.hash, number: Number(BigInt(head.number)) };
  // Each proof takes at least 1.5 s, so the enclave can be killed in the middle of one.
  enclave = await startEnclaveProcess(['--prove-delay-ms', '1500', '--enclave-check', 'headers']);
  host = spawnFlashlog([
    'prover-host',
    '--l1-rpc',
    l1.url,
    '--l2-rpc',
    l2.url,
    '--enclave',
    enclave.url,
    '--port',
    '0',
    '--no-metrics',
    '--enclave-check',
    'headers',
  ]);
  const listening = await host.waitFor((line) => line.msg === 'prover host listening');
  expect(listening.chainId).toBe(1337);

  // The shared broker keeps old requests: this run's group starts at today's end of the topic.
  log = withTopicPrefix(createKafkaLog({ brokers, clientId: `e2e-prover-${run}` }), prefix);
  await log.ensureTopics([{ name: topics.proofRequests }, { name: topics.proofReplies }]);
  const admin = new Kafka({ brokers, clientId: `e2e-prover-admin-${run}`, logLevel: logLevel.NOTHING }).admin();
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
    String(listening.url),
    '--prover-concurrency',
    '2',
    '--no-metrics',
    '--kafka-client-id',
    `e2e-bridge-${run}`,
    '--topic-prefix',
    prefix,
  ]);
  await bridge.waitFor((line) => line.msg === 'prover bridge consuming', 60_000);

  const ends2 = await log.endOffsets(topics.proofReplies);
  const consumer = log.consumer({ topics: [topics.proofReplies], from: 'latest', seek: ends2 });
  consumer.records$.subscribe((record) => replies.push(record));
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await host?.stop();
  await enclave?.process.stop();
  await log?.close();
  await l2?.close();
  await l1?.close();
  dir.remove();
});

const request = (agreed: number, claimed: number, overrides: Partial<ProofRequest> = {}): ProofRequest => ({
  l1Head: l1Head.hash,
  agreedL2HeadHash: l2Blocks[agreed]!.hash,
  agreedL2OutputRoot: l2Blocks[agreed]!.outputRoot,
  claimedL2OutputRoot: l2Blocks[claimed]!.outputRoot,
  claimedL2BlockNumber: claimed,
  proposer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  intermediateBlockInterval: 2,
  l1HeadNumber: l1Head.number,
  imageHash: zeroHash,
  ...overrides,
});

async function ask(req: ProofRequest): Promise<{ requestId: string; reply: ProofReplyRecord }> {
  const requestId = randomUUID();
  await log.produce([
    {
      topic: topics.proofRequests,
      key: requestId,
      value: JSON.stringify({ v: 1, requestId, replyTopic: topics.proofReplies, request: proofRequestToWire(req) }),
    },
  ]);
  const record = await eventually(() => replies.find((r) => r.key === requestId), 60_000, `the reply to ${requestId}`);
  return { requestId, reply: proofReplyRecordSchema.parse(JSON.parse(record.value)) };
}

/** Recovers the signer of every per-block proposal and of the aggregate. */
async function signers(reply: ProofReplyRecord, req: ProofRequest): Promise<Address[]> {
  const result = proofResultFromWire(reply.result);
  if (result.type !== 'tee') throw new Error('expected Tee');
  const out: Address[] = [];
  for (const p of result.proposals) {
    out.push(
      await recoverSigner(
        journalDigest({
          proposer: req.proposer,
          l1OriginHash: p.l1OriginHash,
          prevOutputRoot: p.prevOutputRoot,
          startingL2Block: p.l2BlockNumber - 1,
          outputRoot: p.outputRoot,
          endingL2Block: p.l2BlockNumber,
          intermediateRoots: [],
          configHash: p.configHash,
          teeImageHash: zeroHash,
          scheduleId: devnetScheduleId,
        }),
        p.signature,
      ),
    );
  }
  const a = result.aggregateProposal;
  const n = result.proposals.length;
  const roots = result.proposals.filter((_, i) => (i + 1) % req.intermediateBlockInterval === 0).map((p) => p.outputRoot);
  out.push(
    await recoverSigner(
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
    ),
  );
  return out;
}

describe('proofs end to end (Kafka, and the embedded log)', () => {
  it('a request on the topic gets a reply on the topic, signed by the enclave', async () => {
    const req = request(10, 14);
    const { reply } = await ask(req);
    expect(reply.error).toBeUndefined();
    expect(await signers(reply, req)).toEqual(Array(5).fill(enclave.signer));
    expect(proofResultFromWire(reply.result)).toMatchObject({
      aggregateProposal: { outputRoot: l2Blocks[14]!.outputRoot, l2BlockNumber: 14, l1OriginNumber: l1Head.number },
    });
  }, 90_000);

  it("a wrong claimed root is refused: an error reply with the code and the enclave's text", async () => {
    const { reply } = await ask(request(10, 12, { claimedL2OutputRoot: l2Blocks[11]!.outputRoot }));
    expect(reply.result).toBeUndefined();
    expect(reply.error?.code).toBe(-32000);
    expect(reply.error?.message).toMatch(/^output root mismatch at L2 block 12/);
  }, 90_000);

  it('flashlog prove exits 0 with a proof, and 1 for a refused request', async () => {
    const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
    const prove = (file: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            bin,
            'prove',
            file,
            '--kafka-brokers',
            brokers.join(','),
            '--timeout',
            '60',
            '--log-level',
            'warn',
            '--kafka-client-id',
            `e2e-prove-${run}`,
            '--topic-prefix',
            prefix,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
        });
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
      });
    const good = join(dir.path, 'good.json');
    const req = request(20, 21);
    writeFileSync(good, JSON.stringify(proofRequestToWire(req)));
    const ok = await prove(good);
    expect(ok.code, ok.stderr).toBe(0);
    const reply = proofReplyRecordSchema.parse(JSON.parse(ok.stdout.trim().split('\n').pop()!));
    expect(await signers(reply, req)).toEqual([enclave.signer, enclave.signer]);

    const bad = join(dir.path, 'bad.json');
    writeFileSync(bad, JSON.stringify(proofRequestToWire(request(20, 21, { claimedL2OutputRoot: l2Blocks[22]!.outputRoot }))));
    const refused = await prove(bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/-32000 output root mismatch at L2 block 21/);
  }, 120_000);

  it('an enclave killed mid-request gives a clear error reply, and the bridge keeps going', async () => {
    const port = new URL(enclave.url).port;
    const requestId = randomUUID();
    const req = request(30, 31);
    await log.produce([
      {
        topic: topics.proofRequests,
        key: requestId,
        value: JSON.stringify({ v: 1, requestId, replyTopic: topics.proofReplies, request: proofRequestToWire(req) }),
      },
    ]);
    await host.waitFor((line) => line.msg === 'proving' && line.claimed === 31, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    enclave.process.child.kill('SIGKILL');
    await enclave.process.exited;
    const record = await eventually(() => replies.find((r) => r.key === requestId), 60_000, 'the reply of the killed request');
    const reply = proofReplyRecordSchema.parse(JSON.parse(record.value));
    expect(reply.error?.code).toBe(-32000);
    expect(reply.error?.message).toMatch(new RegExp(`enclave tcp://127\\.0\\.0\\.1:${port} response: connection closed`));
    expect(bridge.child.exitCode).toBeNull();

    // A new enclave (new signer) on the same address: the same bridge and host carry on.
    const killedSigner = enclave.signer;
    enclave = await startEnclaveProcess(['--enclave-check', 'headers'], `tcp://127.0.0.1:${port}`);
    expect(enclave.signer).not.toBe(killedSigner);
    const next = request(31, 33);
    const { reply: after } = await ask(next);
    expect(await signers(after, next)).toEqual(Array(3).fill(enclave.signer));
  }, 120_000);

  it('the same host serves a bridge and prove on the embedded log (separate processes, one SQLite file)', async () => {
    const dataDir = join(dir.path, 'embedded');
    const hostUrl = String((await host.waitFor((line) => line.msg === 'prover host listening')).url);
    const embeddedBridge = spawnFlashlog(['prover-bridge', '--data-dir', dataDir, '--prover-url', hostUrl, '--no-metrics']);
    try {
      await embeddedBridge.waitFor((line) => line.msg === 'prover bridge consuming');
      const file = join(dir.path, 'embedded-request.json');
      const req = request(35, 36);
      writeFileSync(file, JSON.stringify(proofRequestToWire(req)));
      const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url)),
            'prove',
            file,
            '--data-dir',
            dataDir,
            '--timeout',
            '60',
            '--log-level',
            'warn',
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => {
          stdout += c.toString();
        });
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
      });
      expect(out.code, out.stderr).toBe(0);
      const reply = proofReplyRecordSchema.parse(JSON.parse(out.stdout.trim()));
      expect(await signers(reply, req)).toEqual([enclave.signer, enclave.signer]);
    } finally {
      await embeddedBridge.stop();
    }
  }, 90_000);
});
