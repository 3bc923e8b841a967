import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { blockBuilder, signedTransfers } from '../../../test/helpers/view-records.ts';
import { apply, initialViewState, type ViewState } from '../../view/state.ts';
import { createTransactionFormatter } from '../format.ts';
import type { MethodContext } from '../method.ts';
import { eth_sendRawTransactionSync, timeoutOf } from './eth_sendRawTransactionSync.ts';

describe('eth_sendRawTransactionSync timeout', () => {
  it('takes a positive integer up to 6,000 ms, as a number or a hex quantity; anything else is 6,000 (EIP-7966: the default)', () => {
    expect(timeoutOf(500)).toBe(500);
    expect(timeoutOf('0x1f4')).toBe(500);
    expect(timeoutOf(6000)).toBe(6000);
    expect(timeoutOf(undefined)).toBe(6000);
    expect(timeoutOf(0)).toBe(6000);
    expect(timeoutOf(6001)).toBe(6000);
    expect(timeoutOf('0x186a0')).toBe(6000);
    expect(timeoutOf(-5)).toBe(6000);
    expect(timeoutOf(1.5)).toBe(6000);
    expect(timeoutOf('soon')).toBe(6000);
  });

  it('watches the view before it sends: a state published while the send is in flight answers the call', async () => {
    const [tx] = await signedTransfers(1);
    const { raw, hash: rawHash } = tx!;
    // The pending block holding the transaction, as the view would have it after its flashblock.
    let withTx = apply(initialViewState(), { type: 'head', blockNumber: 100n });
    let offset = 0n;
    for (const record of blockBuilder(101n).flashblock([tx!])) {
      withTx = apply(withTx, {
        type: 'record',
        record: { ...record, key: record.key ?? null, partition: 0, offset: offset++, timestamp: 0 },
      });
    }
    // A subject replays nothing: only a subscription made before the send sees this state.
    const states$ = new Subject<ViewState>();
    const calls: string[] = [];
    const ctx = {
      view: () => initialViewState(),
      states$,
      formatter: createTransactionFormatter(),
      limits: { maxLogsRange: 2000 },
      forward: async () => null,
      upstream: {
        url: 'stub',
        async call(method: string) {
          calls.push(method);
          if (method !== 'eth_sendRawTransaction') return null;
          // The pre-confirmation reaches the view before the send is answered, and nothing after.
          states$.next(withTx);
          return rawHash;
        },
      },
    } as unknown as MethodContext;
    const receipt = (await eth_sendRawTransactionSync.call([raw, 1000], ctx)) as { transactionHash: string };
    expect(receipt.transactionHash).toBe(rawHash);
    expect(calls[0]).toBe('eth_getTransactionReceipt'); // the canonical check begins with the watch
    expect(calls).toContain('eth_sendRawTransaction');
  });
});
