import { isPending, requireParam, stateBlockParam } from '../params.ts';
import { defineMethod, type Method } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';

const blockHashPattern = /^0x[0-9a-fA-F]{64}$/;

/**
 * eth_getBlockReceipts(`pending`): receipts of every pre-confirmed transaction of the latest pending
 * block. The block is named as go-ethereum takes it: a number, a tag, a hash, or an EIP-1898 object
 * (`{ blockNumber }`, `{ blockHash, requireCanonical? }`; ethclient's BlockReceipts always sends the
 * object form). `{ blockNumber }` goes upstream as the plain number or tag, which every node takes.
 */
const handler: Method = async (params, ctx) => {
  const raw = requireParam(params, 0, 'a block number, tag, hash or EIP-1898 object');
  if (typeof raw === 'string' && blockHashPattern.test(raw)) return ctx.forward();
  const block = stateBlockParam(raw, 'params[0]');
  if (!isPending(block)) {
    const blockNumber =
      typeof raw === 'object' && raw !== null && 'blockNumber' in raw ? (raw as { blockNumber: unknown }).blockNumber : undefined;
    return blockNumber === undefined ? ctx.forward() : ctx.forward([blockNumber, ...params.slice(1)]);
  }
  const pending = newestHeld(await pendingView(ctx));
  if (!pending) return ctx.forward(asLatest(params, 0));
  return pending.receipts;
};

export const eth_getBlockReceipts = defineMethod({ name: 'eth_getBlockReceipts', public: 'forbidden', handler });
