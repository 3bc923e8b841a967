import { accountRead } from './account.ts';

/** eth_getCode(address, block): `pending` code from the state diff (`0x` for none), else the upstream. */
export const eth_getCode = accountRead(1, (account) => account.code);
