import { describe, expect, it } from 'vitest';
import type { RpcLog } from '../records/logs.ts';
import { catchUpRange, outageStep, waitForPrefix, withExecutedLogs } from './canonical-follow.ts';
import { initialReconcileState, reconcileStep } from './reconcile.ts';

const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;

describe('following canonical heads, without I/O', () => {
  it('reads from the block after the last one reconciled, at most the newest 17 after a gap', () => {
    expect(catchUpRange(null, 100n)).toEqual({ from: 100n, to: 100n });
    expect(catchUpRange(97n, 100n)).toEqual({ from: 98n, to: 100n });
    expect(catchUpRange(100n, 100n)).toEqual({ from: 101n, to: 100n }); // nothing new
    expect(catchUpRange(10n, 100n)).toEqual({ from: 84n, to: 100n });
  });

  it('waits for a pre-confirmation that is a strict prefix of the canonical block, within the grace only', () => {
    expect(waitForPrefix([tx(1)], [tx(1), tx(2)], 1_000, 2_000, 3_000)).toBe(true);
    expect(waitForPrefix([tx(1)], [tx(1), tx(2)], 1_000, 4_000, 3_000)).toBe(false); // grace over
    expect(waitForPrefix([tx(3)], [tx(1), tx(2)], 1_000, 2_000, 3_000)).toBe(false); // not a prefix: a reorg
    expect(waitForPrefix([tx(1), tx(2)], [tx(1), tx(2)], 1_000, 2_000, 3_000)).toBe(false); // same list
  });

  it("adds an executed block's logs to its pre-confirmation, and leaves other states as they are", () => {
    const { state } = reconcileStep(initialReconcileState(3), {
      type: 'preconfirmed',
      blockNumber: 5n,
      index: 0,
      firstNew: 0,
      transactions: [tx(1)],
      newLogs: [],
    });
    const log = { address: '0x00000000000000000000000000000000000000aa', logIndex: '0x0' } as unknown as RpcLog;
    expect(withExecutedLogs(state, 5n, [log]).pending.get(5n)?.logs).toEqual([log]);
    expect(withExecutedLogs(state, 6n, [log])).toBe(state);
    expect(withExecutedLogs(state, 5n, [])).toBe(state);
  });

  it('says the upstream is down once, and back once with how long it was down', () => {
    const first = outageStep(null, false, 1_000);
    expect(first).toEqual({ outage: { since: 1_000 }, change: { type: 'down' } });
    expect(outageStep(first.outage, false, 2_000)).toEqual({ outage: { since: 1_000 }, change: null });
    expect(outageStep(first.outage, true, 4_500)).toEqual({ outage: null, change: { type: 'up', downMs: 3_500 } });
    expect(outageStep(null, true, 5_000)).toEqual({ outage: null, change: null });
  });
});
