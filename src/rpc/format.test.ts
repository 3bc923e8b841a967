import { describe, expect, it } from 'vitest';
import { apply, initialViewState, type PendingBlock } from '../view/state.ts';
import { blockBuilder, signedTransfers } from '../../test/helpers/view-records.ts';
import { createTransactionFormatter } from './format.ts';

/** A pending block of the view holding `count` signed transfers. */
async function pendingBlock(number: bigint, count: number, nonce: number): Promise<PendingBlock> {
  const records = blockBuilder(number).flashblock(await signedTransfers(count, nonce));
  const state = apply(initialViewState(), { type: 'record', record: { ...records[0]!, partition: 0, offset: 0n, timestamp: 0 } });
  return state.blocks[0]!;
}

describe('the transaction formatter', () => {
  it('keeps the transactions it formatted for the last few block numbers only (issue 19: its cache grew the heap)', async () => {
    const formatter = createTransactionFormatter(2);
    const blocks = await Promise.all([10n, 11n, 12n].map((number, i) => pendingBlock(number, 2, i * 2)));
    const first = await formatter.transaction(blocks[0]!, 1);
    expect(first).toMatchObject({ blockNumber: '0xa', transactionIndex: '0x1', hash: blocks[0]!.transactions[1]!.hash });
    // Asked again while block 10 is among the last two: the same object, from the cache.
    await formatter.transaction(blocks[1]!, 0);
    expect(await formatter.transaction(blocks[0]!, 1)).toBe(first);
    const eleven = await formatter.transaction(blocks[1]!, 0);
    // Block 12 makes block 10 the third newest: its entries are dropped, block 11's kept.
    await formatter.transaction(blocks[2]!, 0);
    const again = await formatter.transaction(blocks[0]!, 1);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(await formatter.transaction(blocks[1]!, 0)).toBe(eleven);
  });
});
