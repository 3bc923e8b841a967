import { requireParam, slotParam } from '../params.ts';
import { defineMethod } from '../method.ts';
import { accountRead } from '../account-read.ts';

/** eth_getStorageAt(address, slot, block): the 32-byte word from the pending diff, else the upstream. */
export const eth_getStorageAt = defineMethod({
  name: 'eth_getStorageAt',
  handler: accountRead(
    2,
    (account, params) => account.storage?.[slotParam(params[1], 'params[1]')],
    (params) => {
      slotParam(requireParam(params, 1, 'a storage slot'), 'params[1]');
    },
  ),
});
