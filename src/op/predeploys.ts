/**
 * OP Stack predeploy addresses flashlog reads by name (ethereum-optimism/specs `protocol/predeploys.md`).
 * The L2ToL1MessagePasser: its storage root is the output root's third field, its account the
 * one a witness must prove beside every block.
 */
export const messagePasserAddress = '0x4200000000000000000000000000000000000016' as const;
