import { z } from 'zod';
import { findPendingTransaction } from '../../view/state.ts';
import { hashParam, required } from '../params.ts';
import { defineMethod } from '../method.ts';

/**
 * eth_getTransactionByHash(hash): canonical first, then the pre-confirmed transaction (blockHash
 * null, blockNumber and transactionIndex set). An upstream answer without a block (a transaction
 * still in its mempool) is only returned when the view does not hold it pre-confirmed.
 */
export const eth_getTransactionByHash = defineMethod({
  name: 'eth_getTransactionByHash',
  params: z.tuple([required('a transaction hash', hashParam)]).rest(z.unknown()),
  handler: async ([hash], ctx) => {
    const canonical = (await ctx.forward()) as { blockHash?: string | null } | null;
    if (canonical && canonical.blockHash) return canonical;
    const found = findPendingTransaction(ctx.view(), hash);
    if (found) return ctx.formatter.transaction(found.block, found.position);
    return canonical ?? null;
  },
});
