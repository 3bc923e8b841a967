import { accountRead } from './account.ts';

/** eth_getBalance(address, block): `pending` from the pending state diff, else the upstream. */
export const eth_getBalance = accountRead(1, (account) => account.balance);
