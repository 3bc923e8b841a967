import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import { withTopicPrefix } from '../../src/log/topic-prefix.ts';
import { blockRecordSchema } from '../../src/records/blocks.ts';
import { chainRecordSchema } from '../../src/records/chain.ts';
import { topics } from '../../src/records/topics.ts';
import { kafkaBrokers } from '../helpers/context.ts';
import { readTopic } from '../helpers/execution-harness.ts';
import { spawnFlashlog, type FlashlogProcess } from '../helpers/flashlog-process.ts';

/**
 * A restart of the writer on the Kafka log resumes where the log ends: `ingest --source blocks`
 * on a Denim devnet (200 ms blocks, under load) writes to a real broker, is killed with SIGKILL,
 * and started again after the devnet sealed more blocks. On restart it reads the log's last block
 * records back (src/log/log-tail.ts: a consumer sought to the end offsets less a few) and
 * backfills from there (src/chain/resume.ts). flashlog.blocks must then hold every number from its
 * first block to its last, each height's last record the node's canonical block, and a height
 * written twice only as the same block (what a reader deduplicating by number drops), with no gap
 * record.
 */
const brokers = kafkaBrokers();
const prefix = `test.resume.${randomUUID().slice(0, 8)}.`;
const processes: FlashlogProcess[] = [];
afterAll(async () => {
  for (const process of processes) if (process.child.exitCode === null) await process.stop('SIGTERM').catch(() => undefined);
});
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function rpcCall<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
const headOf = async (rpc: string) => BigInt(await rpcCall<Hex>(rpc, 'eth_blockNumber'));
async function waitForHead(rpc: string, above: bigint, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await headOf(rpc)) <= above) {
    if (Date.now() > deadline) throw new Error(`the devnet did not pass block ${above} in ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** The broker, waited for: it may be restarting (a CI run shares it). */
async function brokerReachable(timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = createKafkaLog({ brokers, clientId: 'flashlog-resume-probe' });
    try {
      await log.listTopics();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`Kafka at ${brokers.join(',')} unreachable: ${(error as Error).message}`);
      await sleep(2000);
    } finally {
      await log.close().catch(() => undefined);
    }
  }
}

describe('ingest --source blocks on the Kafka log: kill -9 and restart', () => {
  it('resumes where the log ends: 0 blocks missing, a height twice only as the same block, no gap', async () => {
    await brokerReachable();
    const devnet = spawnFlashlog(['devnet', '--denim', '--devnet-port', '0', '--load', '5', '--metrics-port', '0']);
    processes.push(devnet);
    const started = await devnet.waitFor((line) => line.msg === 'devnet started', 60_000);
    const [rpc, ws] = [String(started.rpc), String(started.ws)];
    const args = [
      'ingest',
      '--source',
      'blocks',
      '--rpc',
      rpc,
      '--rpc-ws',
      ws,
      '--kafka-brokers',
      brokers.join(','),
      '--topic-prefix',
      prefix,
      '--metrics-port',
      '0',
    ];
    const first = spawnFlashlog(args);
    processes.push(first);
    await first.waitFor((line) => line.msg === 'ingest started (blocks source)', 60_000);
    // More blocks than the restart reads back (64 per partition, resumeDepth in src/chain/resume.ts): the read
    // seeks into the topic instead of starting at its first offset.
    await waitForHead(rpc, (await headOf(rpc)) + 90n, 90_000);
    first.child.kill('SIGKILL');
    await first.exited;
    const killedAt = await headOf(rpc);
    // About 25 blocks sealed while no writer runs (200 ms blocks), well within --max-backfill-blocks.
    await waitForHead(rpc, killedAt + 25n);
    const restartedAt = await headOf(rpc);

    const second = spawnFlashlog(args);
    processes.push(second);
    const resumed = await second.waitFor(
      (line) => line.msg === "blocks source: resuming from the last block the log holds; backfilling to the node's head",
      60_000,
    );
    await waitForHead(rpc, restartedAt + 25n);
    // The writer has published past the restart (its progress is the log's, read below).
    expect(await second.stop('SIGTERM')).toBe(0);

    const log = withTopicPrefix(createKafkaLog({ brokers, clientId: 'flashlog-resume-reader' }), prefix);
    let blocks: { number: bigint; hash: string | null }[];
    let gaps: unknown[];
    try {
      blocks = (await readTopic(log, topics.blocks)).map((record) => {
        const block = blockRecordSchema.parse(JSON.parse(record.value));
        return { number: BigInt(block.blockNumber), hash: block.header.hash?.toLowerCase() ?? null };
      });
      gaps = (await readTopic(log, topics.chain))
        .map((record) => chainRecordSchema.parse(JSON.parse(record.value)))
        .filter((record) => record.type === 'gap');
    } finally {
      await log.close();
    }
    const numbers = blocks.map((block) => block.number);
    const first_ = numbers.reduce((a, b) => (b < a ? b : a));
    const last = numbers.reduce((a, b) => (b > a ? b : a));
    const missing: bigint[] = [];
    for (let n = first_; n <= last; n++) if (!numbers.includes(n)) missing.push(n);
    // The log must reach past the restart: the restarted writer wrote, not only the first one.
    expect(last).toBeGreaterThan(restartedAt);
    expect(BigInt(resumed.block as number) - first_).toBeGreaterThan(64n);
    expect(Number(resumed.block)).toBeGreaterThanOrEqual(Number(first_));
    expect(BigInt(resumed.block as number)).toBeLessThanOrEqual(killedAt);
    // Each height's last record is the node's block there; a height held twice is the same block twice.
    const lastByNumber = new Map<bigint, string | null>();
    const hashesByNumber = new Map<bigint, Set<string | null>>();
    for (const block of blocks) {
      lastByNumber.set(block.number, block.hash);
      hashesByNumber.set(block.number, (hashesByNumber.get(block.number) ?? new Set()).add(block.hash));
    }
    const notCanonical: bigint[] = [];
    for (let n = first_; n <= last; n++) {
      const canonical = (await rpcCall<{ hash: Hex }>(rpc, 'eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash.toLowerCase();
      if (lastByNumber.get(n) !== canonical) notCanonical.push(n);
    }
    const twiceAsAnother = [...hashesByNumber].filter(([, hashes]) => hashes.size > 1).map(([number]) => number);
    const duplicates = blocks.length - lastByNumber.size;
    console.log(
      `kafka resume: blocks ${first_}..${last}, killed at head ${killedAt}, restarted at ${restartedAt}, resumed after block ${String(resumed.block)}; ${blocks.length} records, ${duplicates} duplicate heights`,
    );
    expect({ missing, notCanonical, twiceAsAnother, gaps: gaps.length }).toEqual({
      missing: [],
      notCanonical: [],
      twiceAsAnother: [],
      gaps: 0,
    });
  }, 300_000);
});
