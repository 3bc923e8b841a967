import { accountRead } from './account.ts';

/** eth_getTransactionCount(address, block): `pending` nonce from the state diff, else the upstream. */
export const eth_getTransactionCount = accountRead(1, (account) => account.nonce);
