import { concat, keccak256, type Hex } from 'viem';

/** The L2ToL1MessagePasser predeploy whose storage root goes into the output root. */
export { messagePasserAddress } from '../op/predeploys.ts';

/** Output root v0: keccak256(bytes32(0) ‖ stateRoot ‖ messagePasserStorageRoot ‖ blockHash). */
export function outputRootV0(stateRoot: Hex, messagePasserStorageRoot: Hex, blockHash: Hex): Hex {
  return keccak256(concat([`0x${'00'.repeat(32)}`, stateRoot, messagePasserStorageRoot, blockHash]));
}
