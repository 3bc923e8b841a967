import { defineMethod } from '../method.ts';
import { accountRead } from '../account-read.ts';

/** eth_getBalance(address, block): `pending` from the pending state diff, else the upstream. */
export const eth_getBalance = defineMethod({ name: 'eth_getBalance', handler: accountRead(1, (account) => account.balance) });
