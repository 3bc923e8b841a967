import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmbeddedLog } from '../../src/log/embedded/embedded.ts';
import { createKafkaLog } from '../../src/log/kafka/kafka.ts';
import type { Log, LogRecord } from '../../src/log/port.ts';
import { createProofBridge, type ProofBridge } from '../../src/prover/bridge/bridge.ts';
import type { ProveOutcome } from '../../src/prover/bridge/host-client.ts';
import { proofReplyRecordSchema } from '../../src/records/proofs.ts';
import { eventually, kafkaBrokers, tempDir } from '../helpers/context.ts';

/**
 * The bridge's log behaviour on both engines, with a scripted prover: replies keyed by request
 * id, stored replies for redelivered ids, in-order commits while a long proof runs, bounded
 * concurrency, invalid records. (The real host and enclave are in the end-to-end test.)
 */
const dir = tempDir();
afterAll(() => dir.remove());
const engines = [
  { name: 'embedded', open: (): Log => createEmbeddedLog({ path: join(dir.path, 'bridge.db') }) },
  { name: 'kafka', open: (): Log => createKafkaLog({ brokers: kafkaBrokers(), clientId: 'flashlog-bridge-test' }) },
];

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const proofRequest = (claimed: number) => ({
  l1_head: hash(1),
  agreed_l2_head_hash: hash(2),
  agreed_l2_output_root: hash(3),
  claimed_l2_output_root: hash(claimed),
  claimed_l2_block_number: claimed,
});

/** A prover whose answers the test releases by claimed block number. */
function scriptedProver() {
  const calls: number[] = [];
  const gates = new Map<number, { promise: Promise<void>; open: () => void }>();
  let running = 0;
  let maxRunning = 0;
  const gate = (claimed: number) => {
    let entry = gates.get(claimed);
    if (!entry) {
      let open!: () => void;
      entry = {
        promise: new Promise<void>((resolve) => {
          open = resolve;
        }),
        open,
      };
      gates.set(claimed, entry);
    }
    return entry;
  };
  return {
    calls,
    maxRunning: () => maxRunning,
    hold: (claimed: number) => gate(claimed),
    release: (claimed: number) => gate(claimed).open(),
    async prove(request: unknown, signal: AbortSignal): Promise<ProveOutcome> {
      const claimed = (request as { claimed_l2_block_number: number }).claimed_l2_block_number;
      calls.push(claimed);
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        if (gates.has(claimed))
          await Promise.race([gate(claimed).promise, new Promise((resolve) => signal.addEventListener('abort', resolve))]);
        if (claimed % 10 === 7) return { error: { code: -32000, message: `output root mismatch at L2 block ${claimed}` } };
        if (claimed % 10 === 9) throw new Error('boom');
        // A fresh random signature each call, so a replay is told apart from a second proof.
        const proposal = {
          output_root: hash(claimed),
          signature: `0x${randomUUID().replace(/-/g, '')}`,
          l1_origin_hash: hash(1),
          l1_origin_number: 9,
          l2_block_number: claimed,
          prev_output_root: hash(3),
          config_hash: hash(4),
        };
        return { result: { Tee: { aggregate_proposal: proposal, proposals: [proposal] } } };
      } finally {
        running--;
      }
    },
  };
}

describe.each(engines)('prover bridge on the $name log', (engine) => {
  const run = randomUUID().slice(0, 8);
  // Each test gets its own topics (set by \`useTopics\`).
  let requestTopic = '';
  let replyTopic = '';
  const useTopics = (test: string) => {
    requestTopic = `bridge.${run}.${test}.requests`;
    replyTopic = `bridge.${run}.${test}.replies`;
  };
  const bridges: ProofBridge[] = [];
  const logs: Log[] = [];
  afterAll(async () => {
    for (const bridge of bridges) await bridge.stop();
    for (const log of logs) await log.close();
  });

  const open = async () => {
    const log = engine.open();
    logs.push(log);
    await log.ensureTopics([{ name: requestTopic }, { name: replyTopic }]);
    return log;
  };
  const startBridge = async (
    log: Log,
    prover: ReturnType<typeof scriptedProver>,
    concurrency: number,
    group: string,
    maxStoredReplies?: number,
  ) => {
    const bridge = createProofBridge({
      log,
      group,
      concurrency,
      requestTopic,
      replyTopic,
      prove: (r, s) => prover.prove(r, s),
      ...(maxStoredReplies ? { maxStoredReplies } : {}),
    });
    bridges.push(bridge);
    await bridge.start();
    return bridge;
  };
  const send = (log: Log, requestId: string, value: unknown) =>
    log.produce([{ topic: requestTopic, key: requestId, value: typeof value === 'string' ? value : JSON.stringify(value) }]);
  const request = (requestId: string, claimed: number) => ({ v: 1, requestId, replyTopic, request: proofRequest(claimed) });
  /** Every reply record so far, read from the start of the reply topic. */
  const replies = async (log: Log, count: number): Promise<LogRecord[]> => {
    const consumer = log.consumer({ topics: [replyTopic], from: 'earliest' });
    const out: LogRecord[] = [];
    const sub = consumer.records$.subscribe((record) => out.push(record));
    try {
      await eventually(() => (out.length >= count ? true : undefined), 30_000, `${count} replies`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return out;
    } finally {
      sub.unsubscribe();
      await consumer.close();
    }
  };

  it('long proofs do not stall the others; commits stay behind the unfinished one; redelivery replays stored replies', async () => {
    useTopics('long');
    const log = await open();
    const prover = scriptedProver();
    prover.hold(101);
    const bridge = await startBridge(log, prover, 2, `bridge-${run}-1`);
    await send(log, 'a', request('a', 101)); // long
    await send(log, 'b', request('b', 102));
    await send(log, 'c', request('c', 107)); // an error reply
    await send(log, 'b', request('b', 102)); // redelivered id
    await send(log, 'bad', '{"v":1,"requestId":"bad","request":{"l1_head":"0x12"}}');
    await send(log, 'nowhere', { ...request('nowhere', 103), replyTopic: `bridge.${run}.no-such-topic` });
    // b, c, b again, bad and nowhere are answered while a is still proving.
    const early = await replies(log, 5);
    expect(early.map((r) => r.key).sort()).toEqual(['b', 'b', 'bad', 'c', 'nowhere']);
    const nowhere = proofReplyRecordSchema.parse(JSON.parse(early.find((r) => r.key === 'nowhere')!.value));
    expect(nowhere.error).toEqual({
      code: -32602,
      message: `request record.replyTopic: topic "bridge.${run}.no-such-topic" does not exist`,
    });
    const byKey = (key: string) => early.filter((r) => r.key === key).map((r) => r.value);
    expect(byKey('b')[0]).toBe(byKey('b')[1]);
    expect(prover.calls.filter((c) => c === 102)).toHaveLength(1);
    const c = proofReplyRecordSchema.parse(JSON.parse(byKey('c')[0]!));
    expect(c.error).toEqual({ code: -32000, message: 'output root mismatch at L2 block 107' });
    const bad = proofReplyRecordSchema.parse(JSON.parse(byKey('bad')[0]!));
    expect(bad.error?.code).toBe(-32602);
    expect(bad.error?.message).toMatch(/^request record\.request\.l1_head: /);
    expect(prover.maxRunning()).toBeLessThanOrEqual(2);

    // Stop with a still in flight: nothing was committed past it, so a new bridge in the same
    // group gets a..bad again, replays the stored replies and proves only a.
    await bridge.stop();
    const prover2 = scriptedProver();
    const log2 = await open();
    await startBridge(log2, prover2, 2, `bridge-${run}-1`);
    const all = await replies(log2, 11);
    expect(prover2.calls).toEqual([101]);
    expect(all.filter((r) => r.key === 'a')).toHaveLength(1);
    const a = proofReplyRecordSchema.parse(JSON.parse(all.find((r) => r.key === 'a')!.value));
    expect(a.result).toBeDefined();
    expect(all.filter((r) => r.key === 'b').map((r) => r.value)).toEqual(Array(4).fill(byKey('b')[0]));
    expect(all.filter((r) => r.key === 'c').map((r) => r.value)).toEqual(Array(2).fill(byKey('c')[0]));
  }, 90_000);

  it('never runs more proofs at once than the concurrency', async () => {
    useTopics('concurrency');
    const log = await open();
    const prover = scriptedProver();
    for (let i = 200; i < 206; i++) prover.hold(i);
    const bridge = await startBridge(log, prover, 3, `bridge-${run}-2`);
    for (let i = 200; i < 206; i++) await send(log, `k${i}`, request(`k${i}`, i));
    await eventually(() => (prover.calls.length >= 3 ? true : undefined), 30_000, '3 proofs started');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(prover.calls.length).toBe(3);
    for (let i = 200; i < 206; i++) prover.release(i);
    await eventually(() => (prover.calls.length === 6 ? true : undefined), 30_000, 'all proofs');
    expect(prover.maxRunning()).toBe(3);
    await bridge.stop();
  }, 60_000);

  it('a prover call that throws becomes a -32603 reply, and later requests go on', async () => {
    useTopics('throws');
    const log = await open();
    const prover = scriptedProver();
    await startBridge(log, prover, 1, `bridge-${run}-6`);
    await send(log, 't1', request('t1', 609));
    await send(log, 't2', request('t2', 610));
    const out = await replies(log, 2);
    expect(proofReplyRecordSchema.parse(JSON.parse(out.find((r) => r.key === 't1')!.value)).error).toEqual({
      code: -32603,
      message: 'prover call failed: boom',
    });
    expect(proofReplyRecordSchema.parse(JSON.parse(out.find((r) => r.key === 't2')!.value)).result).toBeDefined();
  }, 60_000);

  it('keeps at most maxStoredReplies; an evicted id is proved again', async () => {
    useTopics('evict');
    const log = await open();
    const prover = scriptedProver();
    await startBridge(log, prover, 1, `bridge-${run}-3`, 2);
    for (const [id, claimed] of [
      ['e1', 301],
      ['e2', 302],
      ['e3', 303],
      ['e3', 303],
      ['e1', 301],
    ] as const)
      await send(log, id, request(id, claimed));
    await replies(log, 5);
    // e3 again is a replay; e1 was evicted by e2 and e3, so it is proved a second time.
    expect(prover.calls).toEqual([301, 302, 303, 301]);
  }, 60_000);

  if (engine.name === 'kafka') {
    it('commits per partition: a long proof holds back only its own partition', async () => {
      useTopics('partitions');
      const log = engine.open();
      logs.push(log);
      await log.ensureTopics([{ name: requestTopic, partitions: 2 }, { name: replyTopic }]);
      const prover = scriptedProver();
      prover.hold(501);
      const bridge = await startBridge(log, prover, 4, `bridge-${run}-5`);
      // Send until both partitions have records; remember where each landed.
      const where = new Map<string, number>();
      let i = 0;
      const sendOne = async (id: string, claimed: number) => {
        const [position] = await send(log, id, request(id, claimed));
        where.set(id, position!.partition);
      };
      await sendOne('held', 501);
      const heldPartition = where.get('held')!;
      while (![...where.values()].includes(1 - heldPartition) || [...where.values()].filter((p) => p === heldPartition).length < 3) {
        await sendOne(`p${i}`, 510 + i);
        i++;
      }
      const others = [...where.keys()].filter((id) => id !== 'held');
      await replies(log, others.length);
      await bridge.stop();
      // A new bridge in the group: the held partition is redelivered from the held record on,
      // the other partition not at all.
      const prover2 = scriptedProver();
      const bridge2 = await startBridge(log, prover2, 4, `bridge-${run}-5`);
      const expected = [...where.values()].filter((p) => p === heldPartition).length;
      await eventually(() => (bridge2.stats().taken >= expected ? true : undefined), 30_000, 'redelivery of the held partition');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(bridge2.stats().taken).toBe(expected);
      expect(prover2.calls).toEqual([501]);
    }, 90_000);

    it('a proof held past the 30 s session timeout triggers no rebalance: nothing is redelivered', async () => {
      useTopics('session');
      const log = await open();
      const prover = scriptedProver();
      prover.hold(401);
      const bridge = await startBridge(log, prover, 2, `bridge-${run}-4`);
      await send(log, 'long', request('long', 401));
      await eventually(() => (prover.calls.includes(401) ? true : undefined), 30_000, 'the long proof to start');
      // Meanwhile other requests keep flowing.
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 11_000));
        await send(log, `short${i}`, request(`short${i}`, 410 + i));
      }
      await replies(log, 3);
      prover.release(401);
      await replies(log, 4);
      // One delivery per record: a session expiry would have reassigned the partition and
      // delivered the uncommitted long request again.
      expect(bridge.stats().taken).toBe(4);
      expect(prover.calls).toEqual([401, 410, 411, 412]);
    }, 90_000);
  }
});
