import { findPendingTransaction } from '../../view/state.ts';
import { hashParam, requireParam } from '../params.ts';
import { defineMethod, type Method } from '../method.ts';

/**
 * eth_getTransactionByHash(hash): canonical first, then the pre-confirmed transaction (blockHash
 * null, blockNumber and transactionIndex set). An upstream answer without a block (a transaction
 * still in its mempool) is only returned when the view does not hold it pre-confirmed.
 */
const handler: Method = async (params, ctx) => {
  const hash = hashParam(requireParam(params, 0, 'a transaction hash'), 'params[0]');
  const canonical = (await ctx.forward()) as { blockHash?: string | null } | null;
  if (canonical && canonical.blockHash) return canonical;
  const found = findPendingTransaction(ctx.view(), hash);
  if (found) return ctx.formatter.transaction(found.block, found.position);
  return canonical ?? null;
};

export const eth_getTransactionByHash = defineMethod({ name: 'eth_getTransactionByHash', handler });
