import { defineMethod } from '../method.ts';
import { accountRead, storageParams } from '../account-read.ts';

/** eth_getStorageAt(address, slot, block): the 32-byte word from the pending diff, else the upstream. */
export const eth_getStorageAt = defineMethod({
  name: 'eth_getStorageAt',
  params: storageParams,
  handler: accountRead(2, (account, [, slot]) => account.storage?.[slot]),
});
