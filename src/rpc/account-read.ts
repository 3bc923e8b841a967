import { z } from 'zod';
import { pendingAccount } from '../view/state.ts';
import type { AccountDiff } from '../records/blocks.ts';
import { addressParam, isPending, latest, orDefault, required, slotParam, stateBlockParam, type StateBlockParam } from './params.ts';
import type { Handler } from './method.ts';
import { asLatest, pendingStateBase, pendingView } from './pending.ts';

/** `[address, block?]`: eth_getBalance, eth_getCode, eth_getTransactionCount (block `latest` by default). */
export const accountParams = z.tuple([required('an address', addressParam), orDefault(stateBlockParam, latest)]).rest(z.unknown());

/** `[address, slot, block?]`: eth_getStorageAt. */
export const storageParams = z
  .tuple([required('an address', addressParam), required('a storage slot', slotParam), orDefault(stateBlockParam, latest)])
  .rest(z.unknown());

/**
 * Point reads with `pending` (see pending.ts for what `pending` is): on a blocks source the node at
 * the pending block, by hash; on a flashblocks source the account's state in the pending diff, else
 * the upstream at the canonical block under the pending blocks. Without pending blocks, `pending`
 * answers as `latest`, and so does a view the node's head has passed (pendingView). The block is
 * the parsed params' item at `blockPosition`.
 */
export function accountRead<Params extends readonly [`0x${string}`, ...unknown[]]>(
  blockPosition: number,
  pick: (account: AccountDiff, params: Params) => unknown,
): Handler<Params> {
  return async (params, ctx, given) => {
    const block = params[blockPosition] as StateBlockParam;
    if (!isPending(block)) return ctx.forward();
    const state = await pendingView(ctx);
    const base = pendingStateBase(state);
    if (!base) return ctx.forward(asLatest(given, blockPosition));
    if (!base.complete) {
      const account = pendingAccount(state, params[0]);
      const value = account ? pick(account, params) : undefined;
      if (value !== undefined) return value;
    }
    const copy = [...given];
    copy[blockPosition] = base.at;
    return ctx.forward(copy);
  };
}
