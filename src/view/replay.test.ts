import { describe, expect, it } from 'vitest';
import type { LogRecord, ProduceRecord } from '../log/port.ts';
import { topics } from '../records/topics.ts';
import { blockBuilder, chainRecord, signedTransfers } from '../../test/helpers/view-records.ts';
import { blockNumberOfRecordText, createDeferredReplay } from './replay.ts';
import { apply, initialViewState, type ViewInput, type ViewState } from './state.ts';

type Tx = { hash: `0x${string}`; raw: `0x${string}` };
const hash = (byte: string) => `0x${byte.repeat(32)}` as `0x${string}`;

/**
 * A log as the pipeline writes it (blocks of several flashblocks, their log records, sealed
 * records a block behind), with what a long log also holds: a late reorg record (after the head
 * moved past the block), a reorg of the pending block, a rebuild (another payload, firstNew back at
 * 0), duplicates, invalid records (not JSON, and schema-invalid, in blocks superseded and blocks
 * still held at the end), a block record whose number is written with an escape (read the usual
 * way), a replaced unsafe block record, and canonical heads seen at the upstream.
 */
function scenario(txs: readonly Tx[]): ViewInput[] {
  const inputs: ViewInput[] = [];
  const offsets = new Map<string, bigint>();
  const add = (records: readonly ProduceRecord[]) => {
    for (const record of records) {
      const offset = offsets.get(record.topic) ?? 0n;
      offsets.set(record.topic, offset + 1n);
      inputs.push({ type: 'record', record: { ...record, partition: 0, offset, timestamp: 0 } });
    }
  };
  let next = 0;
  const take = (count: number) => txs.slice(next, (next += count));
  const sealed = (number: bigint, transactions: readonly Tx[]) =>
    chainRecord({
      type: 'sealed',
      blockNumber: `0x${number.toString(16)}`,
      blockHash: hash('ab'),
      transactions: transactions.map((tx) => tx.hash),
    });
  const schemaInvalid = (record: ProduceRecord): ProduceRecord => ({ ...record, value: record.value.replace('"index":', '"index":-') });
  const escaped = (record: ProduceRecord): ProduceRecord => ({
    ...record,
    value: record.value.replace('"payloadId":"0', '"payloadId":"\\u0030'),
  });
  const withTxs: Record<string, Tx[]> = {};
  for (let number = 100n; number <= 111n; number++) {
    const builder = blockBuilder(number);
    const mine: Tx[] = (withTxs[String(number)] = []);
    const flashblocks = number === 111n ? 2 : 4; // the log ends mid-block
    for (let fb = 0; fb < flashblocks; fb++) {
      const added = take(fb === 0 ? 1 : 2);
      mine.push(...added);
      const records = builder.flashblock(added, { logsPerTx: 2, stateDiff: { [`0x${'1'.repeat(40)}`]: { balance: `0x${fb + 1}` } } });
      if (number === 101n && fb === 2) add([schemaInvalid(records[0]!)]); // superseded later
      if (number === 110n && fb === 2) add([schemaInvalid(records[0]!)]); // still held at the end
      if (number === 103n && fb === 1) add([{ ...records[0]!, value: records[0]!.value.slice(0, 200) }]); // not JSON
      if (number === 107n && fb === 3) add([escaped(records[0]!)]);
      else add(records);
      if (number === 105n && fb === 1) add([records[0]!]); // a duplicate
      if (fb === 1 && number > 100n) add([sealed(number - 1n, withTxs[String(number - 1n)]!)]);
    }
    if (number === 106n) {
      // A rebuild of block 106: another payload from index 0.
      const rebuilt = blockBuilder(106n, { payloadId: '0x00000000000000aa' });
      add(rebuilt.flashblock(take(2), { logsPerTx: 1 }));
    }
    if (number === 104n) {
      // The late reorg of block 102: the head is past it; its logs are in `dropped`.
      const dropped = withTxs['102']!;
      add([
        chainRecord({
          type: 'reorg',
          blockNumber: '0x66',
          blockHash: hash('cd'),
          transactions: dropped.slice(0, 2).map((tx) => tx.hash),
          removedTransactions: dropped.slice(2).map((tx) => tx.hash),
        }),
      ]);
    }
    if (number === 108n) inputs.push({ type: 'head', blockNumber: 107n });
    if (number === 109n) {
      add([{ topic: topics.chain, key: '109', value: '{"v":1,"type":' }]);
      add([
        chainRecord({
          type: 'reorg',
          blockNumber: '0x6d',
          blockHash: hash('ef'),
          transactions: [],
          removedTransactions: [],
          replacedBlockHash: hash('09'),
        }),
      ]);
    }
    if (number === 110n) {
      // A reorg of block 109 (dropped a flashblock ago): its last transaction, from a later flashblock.
      add([
        chainRecord({
          type: 'reorg',
          blockNumber: '0x6d',
          blockHash: hash('ee'),
          transactions: withTxs['109']!.slice(0, -1).map((tx) => tx.hash),
          removedTransactions: [withTxs['109']!.at(-1)!.hash],
        }),
      ]);
    }
  }
  return inputs;
}

/** The inputs of each topic (and the heads) in order, interleaved by a seeded draw, or topic after topic. */
function interleave(inputs: readonly ViewInput[], seed: number | 'by topic'): ViewInput[] {
  const lanes = new Map<string, ViewInput[]>();
  for (const input of inputs) {
    const lane = input.type === 'head' ? 'heads' : input.record.topic;
    lanes.set(lane, [...(lanes.get(lane) ?? []), input]);
  }
  if (seed === 'by topic') return [...lanes.values()].flat();
  let random = seed;
  const draw = () => (random = (random * 1103515245 + 12345) % 2147483648) / 2147483648;
  const out: ViewInput[] = [];
  const queues = [...lanes.values()];
  while (queues.some((queue) => queue.length > 0)) {
    const open = queues.filter((queue) => queue.length > 0);
    out.push(open[Math.floor(draw() * open.length)]!.shift()!);
  }
  return out;
}

/** The state but for the counts a deferred replay leaves out (see replay.ts). */
const comparable = (state: ViewState) => ({ ...state, applied: 0, invalid: 0, lastInvalid: null });

describe('deferred replay', () => {
  it('ends in the state of applying every input in order, whatever the interleaving and wherever the replay ends', async () => {
    const inputs = scenario(await signedTransfers(90));
    for (const order of [inputs, interleave(inputs, 'by topic'), interleave(inputs, 7), interleave(inputs, 1234), interleave(inputs, 99)]) {
      let full = initialViewState();
      for (let end = 1; end <= order.length; end++) {
        full = apply(full, order[end - 1]!);
        const replay = createDeferredReplay(initialViewState());
        for (const input of order.slice(0, end)) replay.apply(input);
        const deferred = replay.finish();
        expect(comparable(deferred), `after ${end} of ${order.length} inputs`).toEqual(comparable(full));
        expect(deferred.applied + deferred.invalid + replay.skipped()).toBe(full.applied + full.invalid);
        expect(deferred.invalid).toBeLessThanOrEqual(full.invalid);
        expect(replay.deferred()).toBe(0);
      }
      expect(full.invalid).toBe(4);
    }
    // In append order: the invalid record of the block still held at the end is found (each reorg
    // record here applies every tail, so few records are skipped; see the next test for a plain log).
    const replay = createDeferredReplay(initialViewState());
    for (const input of inputs) replay.apply(input);
    const state = replay.finish();
    expect(replay.skipped()).toBeGreaterThan(0);
    expect(state.dropped.map((block) => block.number)).toEqual([107n, 108n, 110n]);
    expect(state.blocks.map((block) => block.number)).toEqual([111n]);
    expect(state.invalid).toBe(4);
    expect(state.lastInvalid).toContain('index');
  });

  it('never parses the later records of a block superseded before the end', async () => {
    const txs = await signedTransfers(4);
    const inputs: ViewInput[] = [];
    const offsets = new Map<string, bigint>();
    for (let number = 1n; number <= 30n; number++) {
      const block = blockBuilder(number);
      for (let fb = 0; fb < 4; fb++) {
        const records = [...block.flashblock([txs[fb]!])];
        if (fb === 1 && number > 1n)
          records.push(
            chainRecord({ type: 'sealed', blockNumber: `0x${(number - 1n).toString(16)}`, blockHash: hash('ab'), transactions: [] }),
          );
        for (const record of records) {
          const offset = offsets.get(record.topic) ?? 0n;
          offsets.set(record.topic, offset + 1n);
          inputs.push({ type: 'record', record: { ...record, partition: 0, offset, timestamp: 0 } });
        }
      }
    }
    const replay = createDeferredReplay(initialViewState());
    for (const input of inputs) replay.apply(input);
    const state = replay.finish();
    const full = inputs.reduce(apply, initialViewState());
    expect(comparable(state)).toEqual(comparable(full));
    // Blocks 1-26 fell out of `dropped` (27-29 are dropped, 30 pending): their 3 later records each.
    expect(replay.skipped()).toBe(26 * 3);
    expect(state.applied + replay.skipped()).toBe(full.applied);
  });

  it('resumes from a state with blocks (a snapshot) and defers onto them', async () => {
    const txs = await signedTransfers(6);
    const block = blockBuilder(50n);
    let offset = 0n;
    const records = (produced: ProduceRecord[]): ViewInput[] =>
      produced.map((record) => ({ type: 'record', record: { ...record, partition: 0, offset: offset++, timestamp: 0 } }));
    const head = [...records(block.flashblock([txs[0]!])), ...records(block.flashblock([txs[1]!]))];
    const tail = [...records(block.flashblock([txs[2]!, txs[3]!])), ...records(block.flashblock([txs[4]!]))];
    const resumedFrom = head.reduce(apply, initialViewState());
    const replay = createDeferredReplay(resumedFrom);
    for (const input of tail) replay.apply(input);
    expect(replay.deferred()).toBe(2);
    expect(replay.finish()).toEqual(tail.reduce(apply, resumedFrom));
  });
});

describe('blockNumberOfRecordText', () => {
  const record = (value: object) => JSON.stringify(value);
  it('reads the number when every blockNumber in the text is the same', () => {
    expect(blockNumberOfRecordText(record({ v: 1, blockNumber: '0x1f', receipts: [{ blockNumber: '0x1f' }] }))).toBe(31n);
    expect(blockNumberOfRecordText('{"v":1,"blockNumber":"0x1f"')).toBe(31n); // not JSON: invalid wherever applied
  });
  it('declines what JSON.parse could read as another number', () => {
    // A later duplicate key wins in JSON.parse.
    expect(blockNumberOfRecordText('{"blockNumber":"0x1","receipts":[],"blockNumber":"0x2"}')).toBeUndefined();
    expect(blockNumberOfRecordText('{"blockNumber":"0x1","x":"\\u0022","block\\u004eumber":"0x2"}')).toBeUndefined();
    expect(blockNumberOfRecordText('{"blockNumber": "0x1"}')).toBeUndefined();
    expect(blockNumberOfRecordText('{"blockNumber":1}')).toBeUndefined();
    expect(blockNumberOfRecordText('{"blockNumber":"0x1","receipts":[{"blockNumber":2}]}')).toBeUndefined();
    expect(blockNumberOfRecordText('{"blockNumber":"12"}')).toBeUndefined();
    expect(blockNumberOfRecordText('{"number":"0x1"}')).toBeUndefined();
  });
});
