import { z } from 'zod';
import { blockParam, boolParam, isPending, orDefault, required } from '../params.ts';
import { pendingBlockAnswer } from '../answer-cache.ts';
import { defineMethod } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';

/**
 * eth_getBlockByNumber(block, full): `pending` is the pre-confirmed block with hash 0x00..00 (its
 * serialized bytes kept per view version: answer-cache.ts).
 */
export const eth_getBlockByNumber = defineMethod({
  name: 'eth_getBlockByNumber',
  params: z.tuple([required('a block number or tag', blockParam), orDefault(boolParam, false)]).rest(z.unknown()),
  handler: async ([block, full], ctx, given) => {
    if (!isPending(block)) return ctx.forward();
    const pending = newestHeld(await pendingView(ctx));
    if (!pending) return ctx.forward(asLatest(given, 0));
    return pendingBlockAnswer(pending, full, ctx.formatter);
  },
});
