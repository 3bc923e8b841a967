import type { Hex } from 'viem';

/**
 * The OP Stack accounts flashlog reads by name (ethereum-optimism/specs `protocol/predeploys.md`
 * and `protocol/deposits.md`), each written once here.
 */
/** L2ToL1MessagePasser: its storage root is the output root's third field. */
export const messagePasserAddress = '0x4200000000000000000000000000000000000016' as const;
/** L1Block: the L1-info deposit's target, whose storage the L1 cost reads. */
export const l1BlockAddress = '0x4200000000000000000000000000000000000015' as const;
/** The depositor account: the sender of the L1-info deposit (and Base's BaseTime deposit). */
export const depositorAccount: Hex = '0xdeaddeaddeaddeaddeaddeaddeaddeaddead0001';
/** ProxyAdmin: the owner of every predeploy proxy. */
export const proxyAdminAddress: Hex = '0x4200000000000000000000000000000000000018';
/** SequencerFeeVault: the block's fee recipient, credited the priority fee. */
export const sequencerFeeVault: Hex = '0x4200000000000000000000000000000000000011';
/** The vaults every user transaction credits beside the sequencer's: base fee, L1 fee, operator fee. */
export const feeVaults = {
  baseFee: '0x4200000000000000000000000000000000000019',
  l1Fee: '0x420000000000000000000000000000000000001a',
  operatorFee: '0x420000000000000000000000000000000000001b',
} as const satisfies Record<string, Hex>;
