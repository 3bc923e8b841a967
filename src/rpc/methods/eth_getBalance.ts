import { defineMethod } from '../method.ts';
import { accountParams, accountRead } from '../account-read.ts';

/** eth_getBalance(address, block): `pending` from the pending state diff, else the upstream. */
export const eth_getBalance = defineMethod({
  name: 'eth_getBalance',
  params: accountParams,
  handler: accountRead(1, (account) => account.balance),
});
