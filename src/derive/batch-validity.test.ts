import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { parseRollupConfig } from '../op/rollup-config.ts';
import { checkSingularBatch, type BatchCheck } from './batch-validity.ts';

const rollup = parseRollupConfig({
  l2_chain_id: 10,
  block_time: 2,
  regolith_time: 0,
  fjord_time: 1000,
  holocene_time: 5000,
  isthmus_time: 6000,
  jovian_time: 8000,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});
const rules = { rollup, seqWindowSize: 10n, maxSequencerDrift: 600n };
const h = (byte: string): Hex => `0x${byte.repeat(32)}`;
const epoch = { hash: h('e0'), number: 100n, timestamp: 2000n };
const nextEpoch = { hash: h('e1'), number: 101n, timestamp: 2012n };
const base: BatchCheck = {
  l1Blocks: [epoch, nextEpoch],
  safeHead: { hash: h('50'), number: 7n, timestamp: 2004n },
  inclusion: { hash: h('11'), number: 102n, timestamp: 2030n },
  batch: {
    type: 'singular',
    parentHash: h('50'),
    epochNumber: 100n,
    epochHash: h('e0'),
    timestamp: 2006n,
    transactions: [Uint8Array.of(2, 0xc0)],
  },
};
const check = (change: { batch?: Partial<BatchCheck['batch']> } & Partial<Omit<BatchCheck, 'batch'>> = {}) =>
  checkSingularBatch({ ...base, ...change, batch: { ...base.batch, ...change.batch } }, rules);

describe('checkSingularBatch', () => {
  it('accepts the next block, on the current epoch or the next', () => {
    expect(check()).toEqual({ verdict: 'accept', reason: 'the next block' });
    expect(
      check({ batch: { timestamp: 2012n, epochNumber: 101n, epochHash: h('e1') }, safeHead: { ...base.safeHead, timestamp: 2010n } })
        .verdict,
    ).toBe('accept');
  });

  it('keeps a future batch before Holocene and drops it after; skips a past one after Holocene', () => {
    expect(check({ batch: { timestamp: 2008n } }).verdict).toBe('future');
    expect(check({ batch: { timestamp: 2004n } }).verdict).toBe('drop');
    const holocene = { inclusion: { ...base.inclusion, timestamp: 5000n } };
    expect(check({ ...holocene, batch: { timestamp: 2008n } }).verdict).toBe('drop');
    expect(check({ ...holocene, batch: { timestamp: 2004n } }).verdict).toBe('past');
  });

  it('drops what cannot be the next block, saying why', () => {
    expect(check({ batch: { parentHash: h('51') } }).reason).toMatch(/parent hash .* is not the safe head/);
    expect(check({ inclusion: { ...base.inclusion, number: 111n } }).reason).toMatch(/sequencing window/);
    expect(check({ inclusion: { ...base.inclusion, number: 110n } }).verdict).toBe('accept');
    expect(check({ batch: { epochNumber: 99n } }).reason).toMatch(/older than the current 100/);
    expect(check({ batch: { epochNumber: 102n } }).reason).toMatch(/more than one ahead/);
    expect(check({ batch: { epochHash: h('e1') } }).reason).toMatch(/epoch hash/);
    expect(check({ batch: { transactions: [Uint8Array.of(0x7e)] } }).reason).toBe('transaction 0 is a deposit');
    expect(check({ batch: { transactions: [new Uint8Array()] } }).reason).toBe('transaction 0 is empty');
    expect(check({ batch: { transactions: [Uint8Array.of(4)] } }).reason).toBe('transaction 0 is SetCode before Isthmus');
  });

  it('waits for the next L1 block where the verdict needs it', () => {
    expect(check({ l1Blocks: [] }).verdict).toBe('undecided');
    expect(check({ l1Blocks: [epoch], batch: { epochNumber: 101n, epochHash: h('e1') } }).verdict).toBe('undecided');
  });

  it('holds the sequencer drift: 1800 s from Fjord, empty batches only while the next origin is not due', () => {
    const late = (timestamp: bigint, next = nextEpoch) =>
      check({ l1Blocks: [epoch, next], safeHead: { ...base.safeHead, timestamp: timestamp - 2n }, batch: { timestamp, transactions: [] } });
    expect(late(3800n).verdict).toBe('accept'); // at the drift limit
    expect(late(3802n, { ...nextEpoch, timestamp: 3900n }).verdict).toBe('accept'); // next origin not due yet
    expect(late(3802n).reason).toMatch(/could have adopted the next L1 origin/);
    expect(check({ safeHead: { ...base.safeHead, timestamp: 3800n }, batch: { timestamp: 3802n } }).reason).toMatch(
      /sequencer drift .* with transactions/,
    );
  });
});
