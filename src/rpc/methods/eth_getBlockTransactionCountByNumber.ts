import { numberToHex } from 'viem';
import { z } from 'zod';
import { blockParam, isPending, required } from '../params.ts';
import { defineMethod } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';
import { servedTransactions } from '../post-exec.ts';

/** eth_getBlockTransactionCountByNumber(`pending`): transactions pre-confirmed so far in the latest pending block. */
export const eth_getBlockTransactionCountByNumber = defineMethod({
  name: 'eth_getBlockTransactionCountByNumber',
  params: z.tuple([required('a block number or tag', blockParam)]).rest(z.unknown()),
  handler: async ([block], ctx, given) => {
    if (!isPending(block)) return ctx.forward();
    const pending = newestHeld(await pendingView(ctx));
    if (!pending) return ctx.forward(asLatest(given, 0));
    return numberToHex(servedTransactions(pending).length);
  },
});
