import { blockParam, boolParam, isPending, requireParam } from '../params.ts';
import { formatPendingBlock } from '../format.ts';
import { defineMethod, type Method } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';

/** eth_getBlockByNumber(block, full): `pending` is the pre-confirmed block with hash 0x00..00. */
const handler: Method = async (params, ctx) => {
  const block = blockParam(requireParam(params, 0, 'a block number or tag'), 'params[0]');
  const full = boolParam(params[1], 'params[1]', false);
  if (!isPending(block)) return ctx.forward();
  const pending = newestHeld(await pendingView(ctx));
  if (!pending) return ctx.forward(asLatest(params, 0));
  return formatPendingBlock(pending, full, ctx.formatter);
};

export const eth_getBlockByNumber = defineMethod({ name: 'eth_getBlockByNumber', handler });
