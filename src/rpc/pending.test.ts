import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { apply, initialViewState, type ViewState } from '../view/state.ts';
import { blockBuilder } from '../../test/helpers/view-records.ts';
import { headCheckTimeoutMs, newestHeld, pendingStateBase, pendingView, viewCatchUpMs } from './pending.ts';

/**
 * pendingView holds the view against the node's head: the node behind or level, the view as it
 * is; the node a block past, the view it catches up to, else nothing held (latest); far past,
 * latest at once; a node that does not answer in time, the view. pendingStateBase: by hash on a
 * blocks source, the block under the held ones with their diff on a flashblocks source.
 */
function holding(numbers: readonly bigint[], hashed = false, state: ViewState = initialViewState()): ViewState {
  let offset = 0n;
  for (const number of numbers) {
    for (const record of blockBuilder(number).flashblock([], {
      stateDiff: { '0x00000000000000000000000000000000000000aa': { nonce: '0x1' } },
    })) {
      const value = JSON.parse(record.value) as { header: Record<string, unknown> };
      if (hashed && record.topic === 'flashlog.blocks') value.header.hash = `0x${number.toString(16).padStart(64, '0')}`;
      state = apply(state, {
        type: 'record',
        record: { ...record, value: JSON.stringify(value), key: record.key ?? null, partition: 0, offset: offset++, timestamp: 0 },
      });
    }
  }
  return state;
}
/** A node at `head` whose block at the head holds `sealedTransactions` transactions. */
const node = (head: bigint | 'hang', sealedTransactions = 1) => ({
  call: (method: string) =>
    head === 'hang'
      ? new Promise<never>(() => {})
      : Promise.resolve(`0x${(method === 'eth_getBlockTransactionCountByNumber' ? BigInt(sealedTransactions) : head).toString(16)}`),
});

describe('pendingView', () => {
  it('the node behind the newest held block, or level with a complete one (blocks source): the view as it is, at once', async () => {
    const state = holding([10n, 11n, 12n]);
    expect(await pendingView({ view: () => state, states$: new Subject(), upstream: node(11n) })).toBe(state);
    const complete = holding([10n, 11n, 12n], true);
    for (const head of [11n, 12n]) {
      expect(await pendingView({ view: () => complete, states$: new Subject(), upstream: node(head) })).toBe(complete);
    }
  });

  it('the node level with the block being built (flashblocks source): the view if it holds every sealed transaction, else the next, or latest', async () => {
    // The node sealed 12 with a last flashblock the view has not read: the view's 12 lacks its
    // last transactions, and a nonce read from it would be older than the node's latest.
    const state = holding([10n, 11n, 12n]);
    const held = BigInt(newestHeld(state)!.transactions.length);
    expect(await pendingView({ view: () => state, states$: new Subject(), upstream: node(12n, Number(held)) })).toBe(state);
    const states$ = new Subject<ViewState>();
    const waiting = pendingView({ view: () => state, states$, upstream: node(12n, Number(held) + 1) });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const next = holding([13n], false, state);
    states$.next(next);
    expect(await waiting).toBe(next);
    const stale = await pendingView({ view: () => state, states$: new Subject(), upstream: node(12n, Number(held) + 1) });
    expect(stale.blocks).toEqual([]);
    // A node that says its head but not the count: the view as it is, as when it does not say its head.
    const noCount = {
      call: (method: string) => (method === 'eth_blockNumber' ? Promise.resolve('0xc') : Promise.reject(new Error('socket hang up'))),
    };
    expect(await pendingView({ view: () => state, states$: new Subject(), upstream: noCount })).toBe(state);
  });

  it('the node one block past: the view that reaches it, or after the wait nothing held (latest)', async () => {
    const state = holding([10n, 11n, 12n], true);
    const states$ = new Subject<ViewState>();
    const waiting = pendingView({ view: () => state, states$, upstream: node(13n) });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const next = holding([13n], true, state);
    states$.next(next);
    expect(await waiting).toBe(next);
    const started = Date.now();
    const stale = await pendingView({ view: () => state, states$: new Subject(), upstream: node(13n) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(viewCatchUpMs - 10);
    expect(stale.blocks).toEqual([]);
  });

  it('the node far past: nothing held (latest) at once; a node that does not answer: the view, within the limit', async () => {
    const state = holding([10n, 11n, 12n]);
    let started = Date.now();
    expect((await pendingView({ view: () => state, states$: new Subject(), upstream: node(16n) })).blocks).toEqual([]);
    expect(Date.now() - started).toBeLessThan(viewCatchUpMs);
    started = Date.now();
    expect(await pendingView({ view: () => state, states$: new Subject(), upstream: node('hang') })).toBe(state);
    expect(Date.now() - started).toBeLessThan(headCheckTimeoutMs + 200);
  });
});

describe('pendingStateBase', () => {
  it('blocks source: the newest held block by hash, no diff; flashblocks source: the block under the held ones, with their diff', () => {
    const blocks = holding([10n, 11n, 12n], true);
    expect(pendingStateBase(blocks)).toMatchObject({ at: { blockHash: `0x${'c'.padStart(64, '0')}` }, overrides: {}, complete: true });
    const flashblocks = holding([10n, 11n, 12n]);
    expect(pendingStateBase(flashblocks)).toMatchObject({ at: '0x9', complete: false });
    expect(Object.keys(pendingStateBase(flashblocks)!.overrides)).toEqual(['0x00000000000000000000000000000000000000aa']);
    expect(newestHeld(flashblocks)!.number).toBe(12n);
    expect(pendingStateBase(initialViewState())).toBeUndefined();
  });
});
