import { pendingAccount } from '../view/state.ts';
import type { AccountDiff } from '../records/blocks.ts';
import { addressParam, isPending, requireParam, stateBlockParam } from './params.ts';
import type { Method, MethodContext } from './method.ts';
import { asLatest, pendingStateBase, pendingView } from './pending.ts';

/**
 * Point reads with `pending` (see pending.ts for what `pending` is): on a blocks source the node at
 * the pending block, by hash; on a flashblocks source the account's state in the pending diff, else
 * the upstream at the canonical block under the pending blocks. Without pending blocks, `pending`
 * answers as `latest`, and so does a view the node's head has passed (pendingView).
 */
export function accountRead(
  blockPosition: number,
  pick: (account: AccountDiff, params: readonly unknown[]) => unknown,
  validate: (params: readonly unknown[]) => void = () => {},
): Method {
  return async (params, ctx: MethodContext) => {
    const address = addressParam(requireParam(params, 0, 'an address'), 'params[0]');
    validate(params);
    const block = stateBlockParam(params[blockPosition], `params[${blockPosition}]`, 'latest');
    if (!isPending(block)) return ctx.forward();
    const state = await pendingView(ctx);
    const base = pendingStateBase(state);
    if (!base) return ctx.forward(asLatest(params, blockPosition));
    if (!base.complete) {
      const account = pendingAccount(state, address);
      const value = account ? pick(account, params) : undefined;
      if (value !== undefined) return value;
    }
    const copy = [...params];
    copy[blockPosition] = base.at;
    return ctx.forward(copy);
  };
}
