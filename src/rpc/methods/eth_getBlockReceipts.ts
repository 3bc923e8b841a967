import { z } from 'zod';
import { choose, hashParam, isPending, required, stateBlockParam } from '../params.ts';
import { defineMethod } from '../method.ts';
import { asLatest, newestHeld, pendingView } from '../pending.ts';
import { hexPatterns } from '../../schemas/hex.ts';

const plainHash = hashParam.transform((hash) => ({ kind: 'hash' as const, hash, requireCanonical: false }));
/** A block hash alone, or a block as EIP-1898 names it. */
const blockOrHash = choose((value) => (typeof value === 'string' && hexPatterns.hash32.test(value) ? plainHash : stateBlockParam));

/**
 * eth_getBlockReceipts(`pending`): receipts of every pre-confirmed transaction of the latest pending
 * block. The block is named as go-ethereum takes it: a number, a tag, a hash, or an EIP-1898 object
 * (`{ blockNumber }`, `{ blockHash, requireCanonical? }`; ethclient's BlockReceipts always sends the
 * object form). `{ blockNumber }` goes upstream as the plain number or tag, which every node takes.
 */
export const eth_getBlockReceipts = defineMethod({
  name: 'eth_getBlockReceipts',
  public: 'forbidden',
  params: z.tuple([required('a block number, tag, hash or EIP-1898 object', blockOrHash)]).rest(z.unknown()),
  handler: async ([block], ctx, given) => {
    if (!isPending(block)) {
      const raw = given[0];
      const blockNumber = typeof raw === 'object' && raw !== null && 'blockNumber' in raw ? raw.blockNumber : undefined;
      return blockNumber === undefined ? ctx.forward() : ctx.forward([blockNumber, ...given.slice(1)]);
    }
    const pending = newestHeld(await pendingView(ctx));
    if (!pending) return ctx.forward(asLatest(given, 0));
    return pending.receipts;
  },
});
