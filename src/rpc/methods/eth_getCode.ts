import { defineMethod } from '../method.ts';
import { accountParams, accountRead } from '../account-read.ts';

/** eth_getCode(address, block): `pending` code from the state diff (`0x` for none), else the upstream. */
export const eth_getCode = defineMethod({ name: 'eth_getCode', params: accountParams, handler: accountRead(1, (account) => account.code) });
