import { numberToHex } from 'viem';
import { blockParam, isPending, requireParam } from '../params.ts';
import { defineMethod, type Method } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';

/** eth_getBlockTransactionCountByNumber(`pending`): transactions pre-confirmed so far in the latest pending block. */
const handler: Method = async (params, ctx) => {
  const block = blockParam(requireParam(params, 0, 'a block number or tag'), 'params[0]');
  if (!isPending(block)) return ctx.forward();
  const pending = newestHeld(await pendingView(ctx));
  if (!pending) return ctx.forward(asLatest(params, 0));
  return numberToHex(pending.transactions.length);
};

export const eth_getBlockTransactionCountByNumber = defineMethod({ name: 'eth_getBlockTransactionCountByNumber', handler });
