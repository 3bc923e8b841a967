import { defineMethod } from '../method.ts';
import { accountRead } from '../account-read.ts';

/** eth_getTransactionCount(address, block): `pending` nonce from the state diff, else the upstream. */
export const eth_getTransactionCount = defineMethod({
  name: 'eth_getTransactionCount',
  handler: accountRead(1, (account) => account.nonce),
});
