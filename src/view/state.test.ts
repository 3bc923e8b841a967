import { describe, expect, it } from 'vitest';
import type { LogRecord, ProduceRecord } from '../log/port.ts';
import { topics } from '../records/topics.ts';
import { blockBuilder, chainRecord, signedTransfers } from '../../test/helpers/view-records.ts';
import { apply, findPendingTransaction, initialViewState, latestPending, pendingAccount, type ViewState } from './state.ts';

const offsets = new Map<string, bigint>();
function asLog(records: ProduceRecord[]): LogRecord[] {
  return records.map((record) => {
    const offset = offsets.get(record.topic) ?? 0n;
    offsets.set(record.topic, offset + 1n);
    return { ...record, partition: 0, offset, timestamp: 0 };
  });
}
const applyAll = (state: ViewState, records: LogRecord[]): ViewState =>
  records.reduce((s, record) => apply(s, { type: 'record', record }), state);

/** A flashlog.chain reorg record of block `blockNumber`: the canonical transactions kept, those removed. */
const reorgRecord = (blockNumber: string, transactions: `0x${string}`[], removedTransactions: `0x${string}`[]) =>
  chainRecord({ type: 'reorg', blockNumber, blockHash: `0x${'cd'.repeat(32)}`, transactions, removedTransactions });

describe('view reducer', () => {
  it('accumulates flashblocks of a block; the change holds only the latest flashblock', async () => {
    const txs = await signedTransfers(3);
    const block = blockBuilder(10n);
    let state = applyAll(
      initialViewState(),
      asLog(block.flashblock([txs[0]!], { stateDiff: { '0xAbCdEf0000000000000000000000000000000001': { balance: '0x5' } } })),
    );
    state = applyAll(state, asLog(block.flashblock([txs[1]!, txs[2]!])));
    const pending = latestPending(state)!;
    expect(pending.number).toBe(10n);
    expect(pending.index).toBe(1);
    expect(pending.transactions.map((tx) => tx.hash)).toEqual(txs.map((tx) => tx.hash));
    expect(pending.receipts.map((receipt) => receipt.transactionHash)).toEqual(txs.map((tx) => tx.hash));
    expect(pending.logs.map((log) => log.logIndex)).toEqual(['0x0', '0x1', '0x2']);
    expect(pendingAccount(state, '0xabcdef0000000000000000000000000000000001')?.balance).toBe('0x5');
    expect(findPendingTransaction(state, txs[2]!.hash.toUpperCase().replace('0X', '0x'))?.position).toBe(2);
  });

  it('emits as change the new logs of the latest flashblock only', async () => {
    const txs = await signedTransfers(3);
    const block = blockBuilder(11n);
    let state = applyAll(initialViewState(), asLog(block.flashblock([txs[0]!])));
    const [blockRecord] = asLog(block.flashblock([txs[1]!, txs[2]!]));
    state = apply(state, { type: 'record', record: blockRecord! });
    expect(state.change.type).toBe('flashblock');
    if (state.change.type !== 'flashblock') return;
    expect(state.change.firstNew).toBe(1);
    expect(state.change.newLogs.map((log) => log.transactionHash)).toEqual([txs[1]!.hash, txs[2]!.hash]);
  });

  it('drops a block once sealed, and converges whatever the interleaving of topics', async () => {
    const txs = await signedTransfers(4);
    const a = blockBuilder(100n);
    const b = blockBuilder(101n);
    const blocks = [...a.flashblock([txs[0]!]), ...a.flashblock([txs[1]!]), ...b.flashblock([txs[2]!]), ...b.flashblock([txs[3]!])];
    const chain = [
      chainRecord({ type: 'sealed', blockNumber: '0x64', blockHash: `0x${'ab'.repeat(32)}`, transactions: [txs[0]!.hash, txs[1]!.hash] }),
    ];
    const interleaved = asLog([...blocks.slice(0, 4), ...chain, ...blocks.slice(4)]);
    const topicByTopic = [...interleaved.filter((r) => r.topic === topics.chain), ...interleaved.filter((r) => r.topic !== topics.chain)];
    const blocksFirst = [...interleaved.filter((r) => r.topic !== topics.chain), ...interleaved.filter((r) => r.topic === topics.chain)];
    const results = [interleaved, topicByTopic, blocksFirst].map((records) => applyAll(initialViewState(), records));
    for (const state of results) {
      expect(state.canonical).toBe(100n);
      expect(state.blocks.map((block) => block.number)).toEqual([101n]);
      expect(state.blocks[0]!.transactions.map((tx) => tx.hash)).toEqual([txs[2]!.hash, txs[3]!.hash]);
      expect(state.offsets[`${topics.chain}/0`]).toBeDefined();
    }
    // A head seen at the upstream has the same effect.
    const headed = apply(applyAll(initialViewState(), asLog(blocks)), { type: 'head', blockNumber: 100n });
    expect(headed.blocks.map((block) => block.number)).toEqual([101n]);
  });

  it('on a reorg withdraws the logs of the dropped transactions with removed: true', async () => {
    const txs = await signedTransfers(3);
    const block = blockBuilder(200n);
    let state = applyAll(initialViewState(), asLog([...block.flashblock([txs[0]!, txs[1]!]), ...block.flashblock([txs[2]!])]));
    state = applyAll(state, asLog([reorgRecord('0xc8', [txs[0]!.hash], [txs[1]!.hash, txs[2]!.hash])]));
    expect(state.change.type).toBe('removed');
    if (state.change.type !== 'removed') return;
    expect(state.change.logs.map((log) => [log.transactionHash, log.removed])).toEqual([
      [txs[1]!.hash, true],
      [txs[2]!.hash, true],
    ]);
    expect(state.blocks).toEqual([]);
    // The same reorg again withdraws nothing more.
    const again = applyAll(state, asLog([reorgRecord('0xc8', [txs[0]!.hash], [txs[1]!.hash, txs[2]!.hash])]));
    expect(again.change).toMatchObject({ type: 'removed', logs: [] });
  });

  it('withdraws logs on a reorg record that arrives after the upstream head passed the block', async () => {
    const txs = await signedTransfers(2);
    const block = blockBuilder(210n);
    let state = applyAll(initialViewState(), asLog(block.flashblock([txs[0]!, txs[1]!])));
    state = apply(state, { type: 'head', blockNumber: 211n });
    expect(state.blocks).toEqual([]);
    state = applyAll(state, asLog([reorgRecord('0xd2', [txs[0]!.hash], [txs[1]!.hash])]));
    expect(state.change).toMatchObject({ type: 'removed', logs: [{ transactionHash: txs[1]!.hash, removed: true }] });
  });
});

describe('view reducer: what it keeps, replaces, rejects and merges', () => {
  it('keeps at most 3 pending blocks, the newest', async () => {
    const txs = await signedTransfers(5);
    let state = initialViewState();
    for (let i = 0; i < 5; i++) state = applyAll(state, asLog(blockBuilder(300n + BigInt(i)).flashblock([txs[i]!])));
    expect(state.blocks.map((block) => block.number)).toEqual([302n, 303n, 304n]);
  });

  it('a new payload for the same block (index 0 again) replaces it; a duplicate flashblock is ignored', async () => {
    const txs = await signedTransfers(3);
    const first = blockBuilder(400n);
    const fb0 = asLog(first.flashblock([txs[0]!]));
    const fb1 = asLog(first.flashblock([txs[1]!]));
    let state = applyAll(initialViewState(), [...fb0, ...fb1, ...fb1]);
    expect(state.blocks[0]!.transactions).toHaveLength(2);
    const rebuilt = blockBuilder(400n, { payloadId: '0x00000000000000ff' });
    state = applyAll(state, asLog(rebuilt.flashblock([txs[2]!])));
    expect(state.blocks[0]!.transactions.map((tx) => tx.hash)).toEqual([txs[2]!.hash]);
    expect(state.blocks[0]!.logs.map((log) => log.transactionHash)).toEqual([txs[2]!.hash]);
  });

  it('rejects invalid records by schema, naming the field, and keeps going', () => {
    const bad: LogRecord = {
      topic: topics.blocks,
      partition: 0,
      offset: 7n,
      key: '1',
      value: JSON.stringify({ v: 1, blockNumber: 'seven' }),
      timestamp: 0,
    };
    const notJson: LogRecord = { ...bad, offset: 8n, value: '{' };
    const state = applyAll(initialViewState(), [bad, notJson]);
    expect(state.invalid).toBe(2);
    expect(applyAll(initialViewState(), [bad]).lastInvalid).toMatch(/flashlog\.blocks@7: blockNumber: /);
    expect(state.offsets[`${topics.blocks}/0`]).toBe(9n);
  });

  it('merges the pending state of an account across pending blocks, newest first', async () => {
    const txs = await signedTransfers(2);
    const account = '0x00000000000000000000000000000000000000aa';
    const slot1 = `0x${'0'.repeat(63)}1`;
    const slot2 = `0x${'0'.repeat(63)}2`;
    let state = applyAll(
      initialViewState(),
      asLog(
        blockBuilder(500n).flashblock([txs[0]!], {
          stateDiff: { [account]: { balance: '0x1', nonce: '0x1', storage: { [slot1]: `0x${'1'.repeat(64)}` } } },
        }),
      ),
    );
    state = applyAll(
      state,
      asLog(
        blockBuilder(501n).flashblock([txs[1]!], {
          stateDiff: { [account]: { balance: '0x2', storage: { [slot2]: `0x${'2'.repeat(64)}` } } },
        }),
      ),
    );
    expect(pendingAccount(state, account)).toEqual({
      balance: '0x2',
      nonce: '0x1',
      code: undefined,
      storage: { [slot1]: `0x${'1'.repeat(64)}`, [slot2]: `0x${'2'.repeat(64)}` },
    });
  });
});

describe('view reducer: block records that repeat the transactions the view holds', () => {
  it('validates only the new transactions when the repeated ones are the same, and all of them when not', async () => {
    const txs = await signedTransfers(3);
    const block = blockBuilder(40n);
    const held = applyAll(initialViewState(), asLog(block.flashblock([txs[0]!])));
    const [next] = asLog(block.flashblock([txs[1]!]));
    const applied = apply(held, { type: 'record', record: next! });
    expect(applied.invalid).toBe(0);
    expect(latestPending(applied)!.transactions.map((tx) => tx.hash)).toEqual([txs[0]!.hash, txs[1]!.hash]);
    // The same record with its first (already held) transaction altered to bad hex: validated again, rejected.
    const tampered = JSON.parse(next!.value) as { transactions: { hash: string; raw: string }[] };
    tampered.transactions[0]!.raw = '0xzz';
    const rejected = apply(held, { type: 'record', record: { ...next!, value: JSON.stringify(tampered) } });
    expect(rejected.invalid).toBe(1);
    expect(rejected.lastInvalid).toContain('transactions.0.raw');
    expect(latestPending(rejected)!.index).toBe(0);
    // A bad new transaction is named by its index in the record.
    const badNew = JSON.parse(next!.value) as { transactions: { hash: string; raw: string }[] };
    badNew.transactions[1]!.hash = '0x12';
    expect(apply(held, { type: 'record', record: { ...next!, value: JSON.stringify(badNew) } }).lastInvalid).toContain(
      'transactions.1.hash',
    );
  });
});

describe('view reducer: replay fast paths', () => {
  it('counts a bad log record, valid-looking or not, with the field named, and applies the good ones', async () => {
    const [, good] = asLog(blockBuilder(60n).flashblock(await signedTransfers(1)));
    const badAddress: LogRecord = {
      ...good!,
      offset: good!.offset + 1n,
      value: good!.value.replace(/"address":"0x[0-9a-f]{40}"/, '"address":"0x12"'),
    };
    const badIndex: LogRecord = { ...good!, offset: good!.offset + 2n, value: good!.value.replace(/"index":0/, '"index":-1') };
    const spaced: LogRecord = { ...good!, offset: good!.offset + 3n, value: JSON.stringify(JSON.parse(good!.value), null, 2) };
    const state = applyAll(initialViewState(), [good!, badAddress, spaced, badIndex]);
    expect(state.applied).toBe(2);
    expect(state.invalid).toBe(2);
    expect(applyAll(initialViewState(), [badAddress]).lastInvalid).toMatch(/flashlog\.logs@\d+: address: /);
    expect(state.lastInvalid).toMatch(/flashlog\.logs@\d+: index: /);
  });

  it("extends a block's hash and address indexes across flashblocks as a rebuild from its last record would", async () => {
    const txs = await signedTransfers(6);
    const emitters = ['0x00000000000000000000000000000000000000A1', '0x00000000000000000000000000000000000000b2'] as const;
    const block = blockBuilder(70n);
    const batches = [txs.slice(0, 2), txs.slice(2, 3), txs.slice(3, 6)].map((batch) =>
      asLog(block.flashblock(batch, { logsPerTx: 2, emitters })),
    );
    const extended = latestPending(applyAll(initialViewState(), batches.flat()))!;
    const rebuilt = latestPending(applyAll(initialViewState(), [batches[2]![0]!]))!;
    expect(extended.index).toBe(2);
    expect([...extended.positionByHash]).toEqual(txs.map((tx, position) => [tx.hash.toLowerCase(), position]));
    expect(extended.logs).toHaveLength(12);
    expect([...extended.logsByAddress.keys()]).toEqual([
      '0x00000000000000000000000000000000000000a1',
      '0x00000000000000000000000000000000000000b2',
    ]);
    for (const [address, list] of extended.logsByAddress)
      expect(list).toEqual(extended.logs.filter((log) => log.address.toLowerCase() === address));
    expect(extended.logsByAddress.get('0x00000000000000000000000000000000000000a1')).toHaveLength(6);
    // The last record alone carries only its own receipts, so compare what both know: the hashes.
    expect([...rebuilt.positionByHash]).toEqual([...extended.positionByHash]);
  });
});

describe('view reducer: what it keeps of a block record', () => {
  it("serves a block's logs with the keys in the schema's order, whatever their order in the record", async () => {
    const [record] = asLog(blockBuilder(80n).flashblock(await signedTransfers(1), { logsPerTx: 1 }));
    const value = JSON.parse(record!.value) as { receipts: { logs: Record<string, unknown>[] }[] };
    const log = value.receipts[0]!.logs[0]!;
    const { address, topics: logTopics, ...rest } = log;
    value.receipts[0]!.logs[0] = { ...rest, topics: logTopics, address };
    const state = apply(initialViewState(), { type: 'record', record: { ...record!, value: JSON.stringify(value) } });
    expect(state.invalid).toBe(0);
    expect(JSON.stringify(latestPending(state)!.logs[0])).toBe(JSON.stringify(log));
  });
});
