import type { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAddressFromString, type Address } from '@ethereumjs/util';
import type { VM } from '@ethereumjs/vm';
import { keccak256, toHex, type Hex } from 'viem';

/**
 * A deposit pays the fee recipient nothing, and op-geth never reads the fee recipient's account for
 * one (deposits return before the fee payment in its state transition), so a witness op-geth
 * records for a block of deposits only (a fork's activation block) may not hold that account at
 * all. ethereumjs's runTx reads the coinbase account and writes it back after every transaction,
 * reward or none: run as is, such a block stops on a missing witness node.
 *
 * So a deposit runs in runTx against a block whose coinbase is this sentinel address, which nothing
 * on any chain can hold (the low 20 bytes of a hash of its name): its account reads as empty and its
 * writes and deletes are dropped, before they reach the state. What the fee recipient means inside
 * the deposit is unchanged: its code runs in the real block (COINBASE reads the real fee recipient,
 * execute-block.ts hands every call that block), and the real fee recipient stays warm (EIP-3651)
 * wherever runTx warms the sentinel.
 */
export const depositCoinbase: Hex = `0x${keccak256(toHex('flashlog: the coinbase a deposit runs against')).slice(-40)}`;

/** Makes `state` and the VM's journal treat the sentinel as above, warming `feeRecipient` in its place. */
export function hideDepositCoinbase(vm: VM, state: MerkleStateManager, feeRecipient: Hex): void {
  const sentinel = createAddressFromString(depositCoinbase);
  const isSentinel = (address: Address) => address.equals(sentinel);
  const getAccount = state.getAccount.bind(state);
  const putAccount = state.putAccount.bind(state);
  const deleteAccount = state.deleteAccount.bind(state);
  const modifyAccountFields = state.modifyAccountFields.bind(state);
  state.getAccount = (address) => (isSentinel(address) ? Promise.resolve(undefined) : getAccount(address));
  state.putAccount = (address, account) => (isSentinel(address) ? Promise.resolve() : putAccount(address, account));
  state.deleteAccount = (address) => (isSentinel(address) ? Promise.resolve() : deleteAccount(address));
  state.modifyAccountFields = (address, fields) => (isSentinel(address) ? Promise.resolve() : modifyAccountFields(address, fields));
  const journal = vm.evm.journal;
  const addAlwaysWarmAddress = journal.addAlwaysWarmAddress.bind(journal);
  const sentinelHex = depositCoinbase.slice(2).toLowerCase();
  journal.addAlwaysWarmAddress = (address: string, addToAccessList?: boolean) => {
    addAlwaysWarmAddress(address, addToAccessList);
    if (address.replace(/^0x/, '').toLowerCase() === sentinelHex)
      addAlwaysWarmAddress(feeRecipient.slice(2).toLowerCase(), addToAccessList);
  };
}
