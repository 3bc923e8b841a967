import { findPendingTransaction } from '../../view/state.ts';
import { hashParam, requireParam } from '../params.ts';
import type { Method } from '../method.ts';

/** eth_getTransactionByHash(hash): canonical first, then the pre-confirmed transaction (blockHash null). */
export const eth_getTransactionByHash: Method = async (params, ctx) => {
  const hash = hashParam(requireParam(params, 0, 'a transaction hash'), 'params[0]');
  const canonical = await ctx.forward();
  if (canonical !== null && canonical !== undefined) return canonical;
  const found = findPendingTransaction(ctx.view(), hash);
  return found ? ctx.formatter.transaction(found.block, found.position) : null;
};
