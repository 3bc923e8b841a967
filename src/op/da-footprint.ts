import { hexToBytes, hexToNumber, size, slice, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { fastLzSize } from './l1-cost.ts';
import { l1InfoCalldata, l1InfoLength, l1InfoSelectors } from './l1-info.ts';

/**
 * Jovian's DA footprint (OP Stack specs, protocol/jovian/exec-engine.md "DA footprint block limit";
 * op-geth core/types/rollup_cost.go CalcDAFootprint, core/block_validator.go):
 *
 *   estimatedDaSize(tx) = max(minTransactionSize·1e6, intercept + fastlzCoef·fastLzSize(tx)) / 1e6
 *   daFootprint(tx)     = estimatedDaSize(tx) · daFootprintGasScalar          (0 for deposits)
 *   daFootprint(block)  = Σ daFootprint(tx)   — the header's blobGasUsed, at most the gas limit
 *
 * with Fjord's constants (intercept −42,585,600, fastlzCoef 836,500, minTransactionSize 100) and
 * fastLzSize over the signed EIP-2718 bytes. The scalar is the one the block's L1-info deposit
 * carries in its calldata (setL1BlockValuesJovian, bytes 176–178), as op-geth reads it: a zero
 * there stays zero (op-node writes the default 400 when the SystemConfig holds 0). The Jovian
 * activation block still has the Isthmus-form L1-info deposit (176 bytes), carries no scalar, must
 * hold only deposits and has a footprint of zero.
 */
export const daFootprintConstants = {
  intercept: -42_585_600n,
  fastlzCoef: 836_500n,
  minTransactionSize: 100n,
} as const;

/** The Fjord estimate of a transaction's size in its batch, in bytes (op-geth EstimatedDASize). */
export function estimatedDaSize(signed: Uint8Array): bigint {
  const { intercept, fastlzCoef, minTransactionSize } = daFootprintConstants;
  const scaled = intercept + fastlzCoef * BigInt(fastLzSize(signed));
  const floor = minTransactionSize * 1_000_000n;
  return (scaled < floor ? floor : scaled) / 1_000_000n;
}

/**
 * The DA footprint of one signed transaction: zero for a deposit, and for Lagoon's post-exec
 * transaction (0x7d; specs lagoon/post-exec.md § DA Footprint).
 */
export function txDaFootprint(signed: Uint8Array, daFootprintGasScalar: number): bigint {
  if (signed[0] === 0x7e || signed[0] === 0x7d) return 0n;
  return estimatedDaSize(signed) * BigInt(daFootprintGasScalar);
}

/**
 * The DA footprint gas scalar of a Jovian block, from its L1-info deposit's calldata; `undefined`
 * for the activation block (Isthmus-form L1-info), which must then carry deposits only.
 */
export function daFootprintGasScalarOf(transactions: readonly Hex[]): number | undefined {
  const data = l1InfoCalldata(transactions);
  if (size(data) === l1InfoLength.isthmus) {
    const last = transactions[transactions.length - 1]!;
    if (!last.toLowerCase().startsWith('0x7e'))
      throw new FlashlogError(
        'BLOCK_INVALID',
        'payload.transactions: the Jovian activation block (Isthmus-form L1-info deposit) must hold only deposits',
      );
    return undefined;
  }
  if (size(data) < l1InfoLength.jovian)
    throw new FlashlogError(
      'BLOCK_INVALID',
      `payload.transactions[0]: L1-info calldata of ${size(data)} bytes is too short for a Jovian DA footprint gas scalar (${l1InfoLength.jovian})`,
    );
  if (slice(data, 0, 4) !== l1InfoSelectors.jovian)
    throw new FlashlogError(
      'BLOCK_INVALID',
      `payload.transactions[0]: L1-info selector ${slice(data, 0, 4)} is not setL1BlockValuesJovian (${l1InfoSelectors.jovian})`,
    );
  return hexToNumber(slice(data, 176, 178));
}

/**
 * The DA footprint of a Jovian block's transactions (the L1-info deposit first): op-geth's
 * CalcDAFootprint, with the scalar and the refusals of `daFootprintGasScalarOf`.
 *
 * @example daFootprintOf(block.transactions)
 */
export function daFootprintOf(transactions: readonly Hex[]): bigint {
  const scalar = daFootprintGasScalarOf(transactions);
  if (scalar === undefined) return 0n;
  let total = 0n;
  for (const raw of transactions) total += txDaFootprint(hexToBytes(raw), scalar);
  return total;
}

/**
 * The DA footprint of a Jovian block (its header's blobGasUsed), refusing a block whose footprint
 * exceeds its gas limit.
 *
 * @example const blobGasUsed = blockDaFootprint(attributes.transactions, attributes.gasLimit)
 */
export function blockDaFootprint(transactions: readonly Hex[], gasLimit: bigint): bigint {
  const total = daFootprintOf(transactions);
  if (total > gasLimit)
    throw new FlashlogError(
      'BLOCK_INVALID',
      `DA footprint ${total} exceeds the block gas limit ${gasLimit} (header blobGasUsed; daFootprintGasScalar ${daFootprintGasScalarOf(transactions)})`,
    );
  return total;
}
