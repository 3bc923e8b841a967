import { blockParam, requireParam } from '../params.ts';
import { defineMethod, type Method } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';

/** eth_getBlockReceipts(`pending`): receipts of every pre-confirmed transaction of the latest pending block. */
const handler: Method = async (params, ctx) => {
  const raw = requireParam(params, 0, 'a block number, tag or hash');
  if (raw !== 'pending') {
    // Block hashes and EIP-1898 objects go upstream as they are; a malformed number or tag does not.
    if (typeof raw === 'string' && !/^0x[0-9a-fA-F]{64}$/.test(raw)) blockParam(raw, 'params[0]');
    return ctx.forward();
  }
  const pending = newestHeld(await pendingView(ctx));
  if (!pending) return ctx.forward(asLatest(params, 0));
  return pending.receipts;
};

export const eth_getBlockReceipts = defineMethod({ name: 'eth_getBlockReceipts', public: 'forbidden', handler });
