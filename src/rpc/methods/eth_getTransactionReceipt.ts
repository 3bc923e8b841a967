import { z } from 'zod';
import { findPendingTransaction } from '../../view/state.ts';
import { hashParam, required } from '../params.ts';
import { defineMethod } from '../method.ts';

/** eth_getTransactionReceipt(hash): canonical first, then the pre-confirmed receipt (blockHash 0x00..00). */
export const eth_getTransactionReceipt = defineMethod({
  name: 'eth_getTransactionReceipt',
  params: z.tuple([required('a transaction hash', hashParam)]).rest(z.unknown()),
  handler: async ([hash], ctx) => {
    const canonical = await ctx.forward();
    if (canonical !== null && canonical !== undefined) return canonical;
    const found = findPendingTransaction(ctx.view(), hash);
    return found?.block.receipts[found.position] ?? null;
  },
});
