import { defineMethod } from '../method.ts';
import { accountParams, accountRead } from '../account-read.ts';

/** eth_getTransactionCount(address, block): `pending` nonce from the state diff, else the upstream. */
export const eth_getTransactionCount = defineMethod({
  name: 'eth_getTransactionCount',
  params: accountParams,
  handler: accountRead(1, (account) => account.nonce),
});
