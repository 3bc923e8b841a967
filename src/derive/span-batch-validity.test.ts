import { slice, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { parseRollupConfig } from '../op/rollup-config.ts';
import { checkSpanBatch, type SpanBatchCheck } from './span-batch-validity.ts';

const rollup = parseRollupConfig({
  l2_chain_id: 10,
  block_time: 2,
  regolith_time: 0,
  canyon_time: 0,
  delta_time: 0,
  fjord_time: 1000,
  holocene_time: 5000,
  isthmus_time: 6000,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
});
const rules = { rollup, seqWindowSize: 10n, maxSequencerDrift: 600n };
const h = (byte: string): Hex => `0x${byte.repeat(32)}`;
const l1Blocks = [
  { hash: h('e0'), number: 100n, timestamp: 2000n },
  { hash: h('e1'), number: 101n, timestamp: 2012n },
];
const tx = Uint8Array.of(2, 0xc0);
const base: SpanBatchCheck = {
  l1Blocks,
  safeHead: { hash: h('50'), number: 7n, timestamp: 2004n, l1OriginNumber: 100n },
  inclusion: { hash: h('11'), number: 102n, timestamp: 2030n },
  batch: {
    type: 'span',
    parentCheck: slice(h('50'), 0, 20),
    l1OriginCheck: slice(h('e1'), 0, 20),
    blocks: [
      { timestamp: 2006n, epochNumber: 100n, transactions: [tx] },
      { timestamp: 2008n, epochNumber: 100n, transactions: [] },
      { timestamp: 2012n, epochNumber: 101n, transactions: [tx] },
    ],
  },
};
const check = (change: { batch?: Partial<SpanBatchCheck['batch']> } & Partial<Omit<SpanBatchCheck, 'batch'>> = {}) =>
  checkSpanBatch({ ...base, ...change, batch: { ...base.batch, ...change.batch } }, rules);
const blocks = base.batch.blocks;

describe('checkSpanBatch', () => {
  it('accepts blocks that follow the safe head across an epoch change', () => {
    expect(check()).toEqual({ verdict: 'accept', reason: 'the next blocks' });
  });

  it('checks the parent and the last L1 origin by their first 20 bytes', () => {
    expect(check({ batch: { parentCheck: slice(h('51'), 0, 20) } }).reason).toMatch(/parent check/);
    expect(check({ batch: { l1OriginCheck: slice(h('e0'), 0, 20) } }).reason).toMatch(/L1 origin check/);
    expect(check({ l1Blocks: [l1Blocks[0]!] }).verdict).toBe('undecided');
  });

  it("applies Holocene's future and past rules by the inclusion block's time", () => {
    const later = blocks.map((block) => ({ ...block, timestamp: block.timestamp + 2n }));
    expect(check({ batch: { blocks: later } }).verdict).toBe('future');
    expect(check({ batch: { blocks: later }, inclusion: { ...base.inclusion, timestamp: 5000n } }).verdict).toBe('drop');
    const past = { safeHead: { ...base.safeHead, timestamp: 2020n } };
    expect(check(past).verdict).toBe('drop');
    expect(check({ ...past, inclusion: { ...base.inclusion, timestamp: 5000n } }).verdict).toBe('past');
  });

  it('leaves a batch that overlaps the safe chain undecided', () => {
    expect(check({ safeHead: { ...base.safeHead, timestamp: 2006n } }).reason).toMatch(/overlaps the safe chain/);
  });

  it('drops a block on an unknown origin, before its origin, or with a deposit, naming the block', () => {
    const gap = { l1Blocks: [l1Blocks[0]!, { hash: h('e2'), number: 102n, timestamp: 2010n }] };
    const skipping = [blocks[0]!, { ...blocks[1]!, epochNumber: 101n }, { ...blocks[2]!, epochNumber: 102n }];
    expect(check({ ...gap, batch: { blocks: skipping, l1OriginCheck: slice(h('e2'), 0, 20) } }).reason).toMatch(
      /block 1 .*L1 origin 101 is not among/,
    );
    expect(check({ batch: { blocks: [blocks[0]!, { ...blocks[1]!, epochNumber: 101n }] } }).reason).toMatch(
      /block 1 .*before its L1 origin's 2012/,
    );
    expect(check({ batch: { blocks: [{ ...blocks[0]!, transactions: [Uint8Array.of(0x7e)] }, ...blocks.slice(1)] } }).reason).toBe(
      'block 0 (timestamp 2006): transaction 0 is a deposit',
    );
  });
});
