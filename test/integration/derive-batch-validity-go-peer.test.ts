import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { bytesToHex, slice } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDerivePeer } from '../helpers/derive-peer.ts';
import { checkSingularBatch, type BatchVerdict } from '../../src/derive/batch-validity.ts';
import { checkSpanBatch } from '../../src/derive/span-batch-validity.ts';
import { parseRollupConfig } from '../../src/op/rollup-config.ts';

/**
 * Singular-batch validation against op-node's own `CheckBatch` (derive-peer checkbatch): for random
 * batches around a safe head, near the sequencing window, the sequencer drift (before and after
 * Fjord), Holocene's future/past rules and the fork activation blocks, flashlog's verdict is
 * op-node's.
 */
let peer = '';
beforeAll(() => {
  peer = buildDerivePeer();
}, 20 * 60_000);

const t0 = 1_750_000_000;
const rollupJson = {
  l2_chain_id: 901,
  block_time: 2,
  seq_window_size: 20,
  max_sequencer_drift: 600,
  regolith_time: 0,
  canyon_time: 0,
  delta_time: 0,
  ecotone_time: 0,
  fjord_time: t0,
  granite_time: t0,
  holocene_time: t0 + 4000,
  isthmus_time: t0 + 8000,
  jovian_time: t0 + 12_000,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
};
const rules = { rollup: parseRollupConfig(rollupJson), seqWindowSize: 20n, maxSequencerDrift: 600n };

const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bytesToHex(bytes));
const txArb = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 2, maxLength: 20 }).map((b) => Uint8Array.of(0x02, ...b)) },
  { weight: 1, arbitrary: fc.constantFrom(0x7e, 0x04, 0x7d, 0x01).map((type) => Uint8Array.of(type, 0xc0)) },
  { weight: 1, arbitrary: fc.constant(new Uint8Array()) },
);
const caseArb = fc
  .record({
    epochNumber: fc.integer({ min: 100, max: 1_000_000 }),
    epochTime: fc.constantFrom(t0 - 3000, t0 - 100, t0 + 3900, t0 + 7990, t0 + 11_998, t0 + 20_000),
    nextGap: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.constantFrom(602, 1802)),
    l1Count: fc.constantFrom(0, 1, 2, 2, 2),
    headAhead: fc.constantFrom(0, 2, 10, 600, 1800, 2000),
    headHash: hash,
    timestampShift: fc.constantFrom(-2, 0, 0, 0, 0, 0, 0, 2),
    parentMatches: fc.constantFrom(true, true, true, true, true, true, true, false),
    epochShift: fc.constantFrom(-1, 0, 0, 0, 0, 1, 1, 2),
    epochHashMatches: fc.constantFrom(true, true, true, true, true, true, true, false),
    inclusionDelay: fc.constantFrom(0, 1, 5, 20, 21),
    inclusionTime: fc.constantFrom(t0 - 10, t0 + 3999, t0 + 4000, t0 + 9000),
    otherHash: hash,
    hashes: fc.tuple(hash, hash),
    transactions: fc.oneof(fc.constant([] as Uint8Array[]), fc.array(txArb, { minLength: 1, maxLength: 3 })),
  })
  .map((r) => {
    const l1 = [
      { hash: r.hashes[0], number: BigInt(r.epochNumber), timestamp: BigInt(r.epochTime) },
      { hash: r.hashes[1], number: BigInt(r.epochNumber + 1), timestamp: BigInt(r.epochTime + r.nextGap) },
    ];
    const safeHead = { hash: r.headHash, number: 5000n, timestamp: BigInt(r.epochTime + r.headAhead) };
    const epochNumber = BigInt(r.epochNumber + r.epochShift);
    const origin = l1.find((block) => block.number === epochNumber);
    const batch = {
      type: 'singular' as const,
      parentHash: r.parentMatches ? safeHead.hash : r.otherHash,
      epochNumber,
      epochHash: r.epochHashMatches && origin ? origin.hash : r.otherHash,
      timestamp: safeHead.timestamp + 2n + BigInt(r.timestampShift),
      transactions: r.transactions,
    };
    const inclusion = { hash: r.otherHash, number: epochNumber + BigInt(r.inclusionDelay), timestamp: BigInt(r.inclusionTime) };
    return { l1Blocks: l1.slice(0, r.l1Count), safeHead, batch, inclusion };
  });

/** Span batches around a safe head: their start against the next timestamp, epochs, checks, drift and transactions. */
const spanCaseArb = fc
  .record({
    epochNumber: fc.integer({ min: 100, max: 1_000_000 }),
    epochTime: fc.constantFrom(t0 - 3000, t0 - 100, t0 + 3900, t0 + 7990, t0 + 11_998, t0 + 20_000),
    gaps: fc.tuple(fc.oneof(fc.integer({ min: 1, max: 12 }), fc.constantFrom(602, 1802)), fc.integer({ min: 1, max: 12 })),
    l1Count: fc.constantFrom(0, 1, 2, 3, 3, 3),
    headAhead: fc.constantFrom(0, 2, 10, 600, 1800, 2000),
    headOriginShift: fc.constantFrom(-1, 0, 0, 0, 1),
    hashes: fc.tuple(hash, hash, hash, hash, hash),
    startShift: fc.constantFrom(-4, -4, -4, -2, -2, -1, 0, 0, 0, 0, 0, 2),
    epochStartShift: fc.constantFrom(-1, 0, 0, 0, 1, 1, 2),
    epochSteps: fc.array(fc.constantFrom(0, 0, 1), { minLength: 0, maxLength: 3 }),
    parentMatches: fc.constantFrom(true, true, true, true, true, true, true, false),
    originMatches: fc.constantFrom(true, true, true, true, true, true, true, false),
    inclusionDelay: fc.constantFrom(0, 1, 5, 20, 21),
    inclusionTime: fc.constantFrom(t0 - 10, t0 + 3999, t0 + 4000, t0 + 9000),
    transactions: fc.array(fc.oneof(fc.constant([] as Uint8Array[]), fc.array(txArb, { minLength: 1, maxLength: 2 })), {
      minLength: 4,
      maxLength: 4,
    }),
    safeHashes: fc.tuple(hash, hash, hash, hash),
    safeKnown: fc.constantFrom(0, 4, 4, 4, 4, 2),
    safeDiffers: fc.constantFrom('nothing', 'nothing', 'nothing', 'nothing', 'nothing', 'everything', 'bytes', 'origin'),
  })
  .map((r) => {
    let time = BigInt(r.epochTime);
    const l1 = [0, 1, 2].map((i) => {
      if (i > 0) time += BigInt(r.gaps[i - 1]!);
      return { hash: r.hashes[i]!, number: BigInt(r.epochNumber + i), timestamp: time };
    });
    const safeHead = {
      hash: r.hashes[3],
      number: 5000n,
      timestamp: BigInt(r.epochTime + r.headAhead),
      l1OriginNumber: BigInt(r.epochNumber + r.headOriginShift),
    };
    let epoch = BigInt(r.epochNumber + r.epochStartShift);
    const start = safeHead.timestamp + 2n + BigInt(r.startShift);
    const blocks = [0, ...r.epochSteps].map((step, i) => {
      epoch += BigInt(i === 0 ? 0 : step);
      return { timestamp: start + 2n * BigInt(i), epochNumber: epoch, transactions: r.transactions[i]! as readonly Uint8Array[] };
    });
    const lastOrigin = l1.find((block) => block.number === epoch);
    // The safe chain: the safe head and the three blocks before it, mostly the blocks the batch repeats.
    const safeBlocks = [0, 1, 2, 3].slice(0, r.safeKnown).map((k) => {
      const timestamp = safeHead.timestamp - 2n * BigInt(k);
      const repeated = blocks.find((block) => block.timestamp === timestamp);
      // The block before the safe head differs from the batch's as `safeDiffers` says.
      const differs = k === 1 ? r.safeDiffers : 'nothing';
      const same = repeated && differs !== 'everything';
      // A safe block never holds an empty transaction (op-node would index its type byte).
      const repeatedTransactions = repeated ? repeated.transactions.filter((tx) => tx.length > 0) : [];
      return {
        ref: {
          hash: k === 0 ? safeHead.hash : r.safeHashes[k]!,
          number: safeHead.number - BigInt(k),
          timestamp,
          l1OriginNumber: same ? repeated.epochNumber + (differs === 'origin' ? 1n : 0n) : safeHead.l1OriginNumber,
        },
        transactions: !same
          ? [Uint8Array.of(0x02, k)]
          : differs === 'bytes'
            ? repeatedTransactions.map((tx) => Uint8Array.of(...tx.subarray(0, -1), tx.at(-1)! ^ 1))
            : repeatedTransactions,
      };
    });
    const parentHash = safeBlocks.find((block) => block.ref.timestamp === start - 2n)?.ref.hash ?? safeHead.hash;
    const batch = {
      type: 'span' as const,
      parentCheck: r.parentMatches ? slice(parentHash, 0, 20) : slice(r.hashes[4], 0, 20),
      l1OriginCheck: r.originMatches && lastOrigin ? slice(lastOrigin.hash, 0, 20) : slice(r.hashes[4], 0, 20),
      blocks,
    };
    const inclusion = { hash: r.hashes[4], number: blocks[0]!.epochNumber + BigInt(r.inclusionDelay), timestamp: BigInt(r.inclusionTime) };
    return { l1Blocks: l1.slice(0, r.l1Count), safeHead, batch, inclusion, safeBlocks };
  });

const json = (value: unknown) => JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as unknown;

describe("batch validation against op-node's CheckBatch (derive-peer checkbatch)", () => {
  it("gives op-node's verdict on every batch, every verdict met", () => {
    const cases = fc.sample(caseArb, { numRuns: 5000, seed: 29 });
    const input = {
      rollup: rollupJson,
      cases: cases.map((c) =>
        json({ ...c, batch: { ...c.batch, transactions: (c.batch.transactions as readonly Uint8Array[]).map((tx) => bytesToHex(tx)) } }),
      ),
    };
    const run = spawnSync(peer, ['checkbatch'], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (run.status !== 0) throw new Error(`derive-peer checkbatch exited ${run.status}: ${run.stderr}`);
    const expected = JSON.parse(run.stdout) as BatchVerdict[];
    const ours = cases.map((c) => checkSingularBatch(c, rules));
    const mismatches = ours.flatMap((result, i) =>
      result.verdict === expected[i]
        ? []
        : [{ case: i, op: expected[i], flashlog: result.verdict, reason: result.reason, input: input.cases[i] }],
    );
    expect(mismatches.slice(0, 3)).toEqual([]);
    const counts = Object.fromEntries(
      ['accept', 'drop', 'undecided', 'future', 'past'].map((v) => [v, expected.filter((e) => e === v).length]),
    );
    for (const [verdict, count] of Object.entries(counts)) expect(count, `${verdict} cases`).toBeGreaterThan(10);
    const reasons = new Set(ours.filter((o) => o.verdict === 'drop').map((o) => o.reason.replace(/[0-9]+|0x[0-9a-f]+/g, '')));
    expect(reasons.size).toBeGreaterThan(10);
  });

  it("gives op-node's verdict on every span batch, one that overlaps the safe chain held against the safe blocks", () => {
    const cases = fc.sample(spanCaseArb, { numRuns: 5000, seed: 29 });
    const input = {
      rollup: rollupJson,
      cases: cases.map((c) =>
        json({
          ...c,
          batch: undefined,
          safeBlocks: c.safeBlocks.map((block) => ({ ...block.ref, transactions: block.transactions.map((tx) => bytesToHex(tx)) })),
          span: {
            ...c.batch,
            blocks: c.batch.blocks.map((block) => ({ ...block, transactions: block.transactions.map((tx) => bytesToHex(tx)) })),
          },
        }),
      ),
    };
    const expected = peerVerdicts(input);
    const ours = cases.map((c) =>
      checkSpanBatch(c, rules, (number) => {
        const block = c.safeBlocks.find((safe) => safe.ref.number === number);
        // op-node's payload opens with the L1-info deposit; one deposit here too.
        return block && { ref: block.ref, transactions: [Uint8Array.of(0x7e), ...block.transactions] };
      }),
    );
    const mismatches = ours.flatMap((result, i) =>
      result.verdict === expected[i]
        ? []
        : [{ case: i, op: expected[i], flashlog: result.verdict, reason: result.reason, input: input.cases[i] }],
    );
    expect(mismatches.slice(0, 3)).toEqual([]);
    for (const verdict of ['accept', 'drop', 'undecided', 'future', 'past'])
      expect(expected.filter((e) => e === verdict).length, `${verdict} cases`).toBeGreaterThan(10);
    expect(new Set(ours.filter((o) => o.verdict === 'drop').map((o) => o.reason.replace(/[0-9]+|0x[0-9a-f]+/g, ''))).size).toBeGreaterThan(
      10,
    );
  });
});

function peerVerdicts(input: unknown): BatchVerdict[] {
  const run = spawnSync(peer, ['checkbatch'], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`derive-peer checkbatch exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout) as BatchVerdict[];
}
