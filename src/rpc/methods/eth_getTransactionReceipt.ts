import { findPendingTransaction } from '../../view/state.ts';
import { hashParam, requireParam } from '../params.ts';
import { defineMethod, type Method } from '../method.ts';

/** eth_getTransactionReceipt(hash): canonical first, then the pre-confirmed receipt (blockHash 0x00..00). */
const handler: Method = async (params, ctx) => {
  const hash = hashParam(requireParam(params, 0, 'a transaction hash'), 'params[0]');
  const canonical = await ctx.forward();
  if (canonical !== null && canonical !== undefined) return canonical;
  const found = findPendingTransaction(ctx.view(), hash);
  return found?.block.receipts[found.position] ?? null;
};

export const eth_getTransactionReceipt = defineMethod({ name: 'eth_getTransactionReceipt', handler });
