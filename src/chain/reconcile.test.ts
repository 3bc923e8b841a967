import { describe, expect, it } from 'vitest';
import { chainRecordSchema } from '../records/chain.ts';
import { logRecordSchema, type RpcLog } from '../records/logs.ts';
import { initialReconcileState, needsLogs, reconcileStep, type ReconcileState } from './reconcile.ts';

const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as `0x${string}`;
const ZERO = h(0);
/** Logs as the executor numbers them: block-wide logIndex, one log per tx at `perTx`. */
function logsOf(block: bigint, txs: readonly `0x${string}`[], perTx = 1): RpcLog[] {
  const logs: RpcLog[] = [];
  txs.forEach((tx, i) => {
    for (let j = 0; j < perTx; j++) {
      logs.push({
        address: '0x00000000000000000000000000000000000000aa',
        topics: [tx],
        data: '0x01',
        blockNumber: `0x${block.toString(16)}`,
        blockHash: ZERO,
        blockTimestamp: '0x10',
        transactionHash: tx,
        transactionIndex: `0x${i.toString(16)}`,
        logIndex: `0x${logs.length.toString(16)}`,
        removed: false,
      });
    }
  });
  return logs;
}

function preconfirm(state: ReconcileState, block: bigint, txs: `0x${string}`[], index = 0) {
  return reconcileStep(state, {
    type: 'preconfirmed',
    blockNumber: block,
    index,
    transactions: txs,
    newLogs: logsOf(block, txs, 2),
    firstNew: 0,
  }).state;
}

describe('reconcile', () => {
  it('canonical with the same ordered transactions -> sealed with the canonical hash, nothing removed', () => {
    const txs = [h(1), h(2), h(3)];
    const state = preconfirm(initialReconcileState(), 10n, txs);
    expect(needsLogs(state, { number: 10n, transactions: txs })).toBe(false);
    const { state: next, events } = reconcileStep(state, { type: 'canonical', block: { number: 10n, hash: h(99), transactions: txs } });
    expect(events).toHaveLength(1);
    const record = chainRecordSchema.parse(events[0]!.type === 'sealed' ? events[0]!.record : null);
    expect(record).toMatchObject({ type: 'sealed', blockNumber: '0xa', blockHash: h(99), transactions: txs });
    expect(next.pending.size).toBe(0);
    expect(next.canonical).toBe(10n);
  });

  it('the last transaction left out -> reorg and removed copies of exactly its logs', () => {
    const txs = [h(1), h(2), h(3)];
    const state = preconfirm(initialReconcileState(), 10n, txs, 4);
    const canonicalTxs = [h(1), h(2)];
    expect(needsLogs(state, { number: 10n, transactions: canonicalTxs })).toBe(true);
    const { events } = reconcileStep(state, {
      type: 'canonical',
      block: { number: 10n, hash: h(98), transactions: canonicalTxs, logs: logsOf(10n, canonicalTxs, 2) },
    });
    expect(events).toHaveLength(1);
    const reorg = events[0]!;
    if (reorg.type !== 'reorg') throw new Error(`expected reorg, got ${reorg.type}`);
    expect(chainRecordSchema.parse(reorg.record)).toMatchObject({ type: 'reorg', removedTransactions: [h(3)], transactions: canonicalTxs });
    expect(reorg.removedLogs).toHaveLength(2);
    for (const log of reorg.removedLogs) {
      expect(logRecordSchema.parse(log)).toMatchObject({ removed: true, transactionHash: h(3), index: 4, blockHash: ZERO });
    }
    expect(reorg.removedLogs.map((log) => log.logIndex)).toEqual(['0x4', '0x5']);
  });

  it('a transaction in the middle left out -> its logs and the renumbered logs after it are removed', () => {
    const txs = [h(1), h(2), h(3)];
    const state = preconfirm(initialReconcileState(), 10n, txs);
    const canonicalTxs = [h(1), h(3)];
    const { events } = reconcileStep(state, {
      type: 'canonical',
      block: { number: 10n, hash: h(98), transactions: canonicalTxs, logs: logsOf(10n, canonicalTxs, 2) },
    });
    const reorg = events[0]!;
    if (reorg.type !== 'reorg') throw new Error('expected reorg');
    expect(reorg.record).toMatchObject({ removedTransactions: [h(2)] });
    // tx 2's two logs are gone; tx 3's logs moved from index 4,5 to 2,3 (position 2 -> 1).
    expect(reorg.removedLogs.map((log) => [log.transactionHash, log.logIndex])).toEqual([
      [h(2), '0x2'],
      [h(2), '0x3'],
      [h(3), '0x4'],
      [h(3), '0x5'],
    ]);
  });

  it('the same transactions in another order -> reorg with no removed transactions', () => {
    const state = preconfirm(initialReconcileState(), 10n, [h(1), h(2)]);
    const { events } = reconcileStep(state, {
      type: 'canonical',
      block: { number: 10n, hash: h(98), transactions: [h(2), h(1)], logs: logsOf(10n, [h(2), h(1)], 2) },
    });
    expect(events[0]).toMatchObject({ type: 'reorg', record: { removedTransactions: [] } });
    expect(events[0]?.type === 'reorg' ? events[0].removedLogs : []).toHaveLength(4);
  });

  it('logs accumulate across flashblocks; a block restarted from transaction 0 starts over', () => {
    /** Flashblock `index` of block 5: the transactions so far, the new ones' logs from `firstNew`. */
    const flashblock = (state: ReconcileState, index: number, transactions: `0x${string}`[], firstNew: number) =>
      reconcileStep(state, {
        type: 'preconfirmed',
        blockNumber: 5n,
        index,
        transactions,
        newLogs: logsOf(5n, transactions).slice(firstNew),
        firstNew,
      }).state;
    let state = flashblock(initialReconcileState(), 0, [h(1)], 0);
    state = flashblock(state, 1, [h(1), h(2)], 1);
    expect(state.pending.get(5n)!.logs.map((log) => log.transactionHash)).toEqual([h(1), h(2)]);
    state = flashblock(state, 0, [h(7)], 0);
    expect(state.pending.get(5n)!.logs.map((log) => log.transactionHash)).toEqual([h(7)]);
  });

  it('a canonical block never pre-confirmed publishes nothing; old canonical heads are ignored', () => {
    let state = preconfirm(initialReconcileState(), 10n, [h(1)]);
    let result = reconcileStep(state, { type: 'canonical', block: { number: 9n, hash: h(9), transactions: [h(5)] } });
    expect(result.events).toEqual([]);
    state = result.state;
    result = reconcileStep(state, { type: 'canonical', block: { number: 8n, hash: h(8), transactions: [] } });
    expect(result.state.canonical).toBe(9n);
    expect(result.state.pending.has(10n)).toBe(true);
  });

  it('keeps at most 3 pending blocks above canonical and drops stale pre-confirmations', () => {
    let state = initialReconcileState(3);
    const dropped: bigint[] = [];
    for (const n of [1n, 2n, 3n, 4n, 5n]) {
      const result = reconcileStep(state, {
        type: 'preconfirmed',
        blockNumber: n,
        index: 0,
        transactions: [h(Number(n))],
        newLogs: [],
        firstNew: 0,
      });
      state = result.state;
      for (const event of result.events) if (event.type === 'dropped') dropped.push(event.blockNumber);
    }
    expect([...state.pending.keys()]).toEqual([3n, 4n, 5n]);
    expect(dropped).toEqual([1n, 2n]);
    state = reconcileStep(state, { type: 'canonical', block: { number: 4n, hash: h(4), transactions: [h(4)] } }).state;
    expect([...state.pending.keys()]).toEqual([5n]);
    const stale = reconcileStep(state, { type: 'preconfirmed', blockNumber: 4n, index: 1, transactions: [h(4)], newLogs: [], firstNew: 1 });
    expect(stale.events).toEqual([{ type: 'dropped', blockNumber: 4n, reason: 'stale' }]);
  });
});
