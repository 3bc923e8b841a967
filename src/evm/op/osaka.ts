import { paramsTx } from '@ethereumjs/tx';

/**
 * Osaka on L2 (OP's Karst, Base's Azul): the EVM is ethereumjs's Osaka (EIP-7823 and EIP-7883
 * MODEXP bounds and gas, EIP-7939 CLZ, EIP-7951 P256VERIFY at 6,900 gas, EIP-7825's 2^24
 * transaction gas cap), with what does not belong on an L2 left out:
 * - deposits are exempt from the EIP-7825 cap (base/docs `upgrades/azul/exec-engine.mdx`; the same
 *   is assumed for OP's Karst, UNCONFIRMED in OP's specs): a deposit's transaction object is built
 *   with the cap lifted to 2^64 - 1, the largest gas a deposit can carry;
 * - EIP-7918 (blob base fee bounded by execution cost) and the blob schedules (EIP-7892) only
 *   shape a block's `excessBlobGas` for its child; L2 headers keep `excessBlobGas` 0 and their
 *   `blobGasUsed` from OP rules (execute-block builds them), so neither reaches an L2 header;
 * - EIP-7594 (PeerDAS) is networking; blob transactions are invalid on OP chains anyway.
 */
export const depositTxParams = { ...paramsTx, 7825: { maxTransactionGasLimit: '18446744073709551615' } } as unknown as typeof paramsTx;
