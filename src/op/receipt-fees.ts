import { numberToHex, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { txDaFootprint } from './da-footprint.ts';
import { txFees, type ReadL1BlockSlot } from './l1-cost.ts';
import { parseL1Info, type L1Info } from './l1-info.ts';
import type { BlockRules } from './rollup-config.ts';

/**
 * The OP fee fields of a non-deposit receipt, as op-geth derives them from the block's L1-info
 * deposit (core/types/receipt_opstack.go `deriveOPStackFields` @de9537e8, core/types/rollup_cost.go
 * `extractL1GasParams` @9cc4cbc2) and marshals them (internal/ethapi `marshalReceipt`):
 *
 *   field                 from                                             present
 *   l1GasPrice            the L1 origin's base fee                         always
 *   l1GasUsed, l1Fee      the L1 cost function of the fork and form        always
 *   l1FeeScalar           bedrock scalar / 1e6 as a decimal string         Bedrock-form L1 info (before Ecotone, and its activation block)
 *   l1BlobBaseFee         the L1 origin's blob base fee                    Ecotone-or-later form
 *   l1BaseFeeScalar, l1BlobBaseFeeScalar                                    Ecotone-or-later form
 *   operatorFeeScalar, operatorFeeConstant                                 Isthmus-or-later form, and one of them non-zero
 *   daFootprintGasScalar  the Jovian L1 info's scalar                      Jovian (not its activation block, whose L1 info has none)
 *   blobGasUsed           daFootprintGasScalar · estimatedDaSize(tx)       Jovian, as op-geth sets Receipt.BlobGasUsed
 *
 * Deposits (0x7E) and Lagoon's post-exec transaction (0x7D) get none of them.
 */
export interface OpReceiptFees {
  readonly l1GasPrice: bigint;
  readonly l1GasUsed: bigint;
  readonly l1Fee: bigint;
  readonly l1FeeScalar?: string;
  readonly l1BlobBaseFee?: bigint;
  readonly l1BaseFeeScalar?: number;
  readonly l1BlobBaseFeeScalar?: number;
  readonly operatorFeeScalar?: number;
  readonly operatorFeeConstant?: bigint;
  readonly daFootprintGasScalar?: number;
  readonly blobGasUsed?: bigint;
}

/** The fee fields of one block's receipts: a function of each transaction's signed bytes (undefined for deposits). */
export type ReceiptFeesOf = (signed: Uint8Array) => OpReceiptFees | undefined;

/**
 * The L1Block predeploy's storage as the L1-info deposit leaves it, for the slots the fee
 * functions read (its Solidity layout; see l1-cost.ts). Slots the deposit's form does not write
 * (Bedrock's overhead and scalar after Ecotone) read as zero, which is what op-geth's receipts take.
 */
function l1BlockSlotsAfter(info: L1Info): ReadL1BlockSlot {
  const word = (value: bigint) => numberToHex(value, { size: 32 });
  const packed = (high: bigint, low: bigint, lowBytes: number) => word((high << BigInt(lowBytes * 8)) | low);
  const slots = new Map<bigint, Hex>([
    [1n, word(info.l1BaseFee ?? 0n)],
    // scalars slot: baseFeeScalar ‖ blobBaseFeeScalar ‖ sequenceNumber in its low 16 bytes
    [3n, packed((BigInt(info.baseFeeScalar ?? 0) << 32n) | BigInt(info.blobBaseFeeScalar ?? 0), info.sequenceNumber ?? 0n, 8)],
    [5n, word(info.overhead ?? 0n)],
    [6n, word(info.scalar ?? 0n)],
    [7n, word(info.blobBaseFee ?? 0n)],
    // operator fee slot: operatorFeeScalar ‖ operatorFeeConstant in its low 12 bytes
    [8n, packed(BigInt(info.operatorFeeScalar ?? 0), info.operatorFeeConstant ?? 0n, 8)],
  ]);
  return async (slot) => slots.get(slot) ?? word(0n);
}

/**
 * The bedrock scalar as op-geth prints its big.Float (scalar / 1e6, Go's %g with 10 digits), for
 * the plain decimal range only; outside it the field is left out rather than printed otherwise.
 */
function feeScalarText(scalar: bigint): string | undefined {
  const value = Number(scalar) / 1e6;
  if (value !== 0 && (value < 1e-4 || value >= 1e10)) return undefined;
  return String(Number(value.toPrecision(10)));
}

/**
 * The fee fields of every non-deposit receipt of a block, from its L1-info deposit's calldata and
 * the block's fork rules, with the fee functions of l1-cost.ts.
 *
 * @example const feesOf = await receiptFeesOf(rulesAt(config, timestamp), l1InfoCalldata(transactions)); feesOf(hexToBytes(raw))
 */
export async function receiptFeesOf(rules: BlockRules, l1InfoData: Hex, where = 'L1-info deposit'): Promise<ReceiptFeesOf> {
  const info = parseL1Info(l1InfoData, where);
  if (info.l1BaseFee === undefined)
    throw new FlashlogError('BLOCK_INVALID', `${where}: the L1 base fee is missing from the ${info.form} calldata`);
  const fees = await txFees(rules, l1BlockSlotsAfter(info), { bedrockForm: info.form === 'bedrock' });
  const ecotoneForm = info.form !== 'bedrock';
  const operatorFields =
    info.operatorFeeScalar !== undefined && (info.operatorFeeScalar !== 0 || info.operatorFeeConstant !== 0n)
      ? { operatorFeeScalar: info.operatorFeeScalar, operatorFeeConstant: info.operatorFeeConstant! }
      : {};
  const feeScalar = info.scalar === undefined ? undefined : feeScalarText(info.scalar);
  const jovian = rules.active('jovian') && info.daFootprintGasScalar !== undefined;
  const l1GasPrice = info.l1BaseFee;
  return (signed) => {
    if (signed[0] === 0x7e || signed[0] === 0x7d) return undefined;
    return {
      l1GasPrice,
      ...fees.l1FeeAndGas(signed),
      ...(feeScalar !== undefined ? { l1FeeScalar: feeScalar } : {}),
      ...(ecotoneForm
        ? { l1BlobBaseFee: info.blobBaseFee!, l1BaseFeeScalar: info.baseFeeScalar!, l1BlobBaseFeeScalar: info.blobBaseFeeScalar! }
        : {}),
      ...operatorFields,
      ...(jovian
        ? { daFootprintGasScalar: info.daFootprintGasScalar!, blobGasUsed: txDaFootprint(signed, info.daFootprintGasScalar!) }
        : {}),
    };
  };
}

/**
 * The order of the wire fields: those the log's receipt schema names first, in its order
 * (src/records/blocks.ts), then the later forks' fields, which it keeps as extra keys.
 */
const wireOrder = [
  'l1Fee',
  'l1GasPrice',
  'l1GasUsed',
  'l1FeeScalar',
  'l1BaseFeeScalar',
  'l1BlobBaseFee',
  'l1BlobBaseFeeScalar',
  'operatorFeeScalar',
  'operatorFeeConstant',
  'daFootprintGasScalar',
  'blobGasUsed',
] as const satisfies readonly (keyof OpReceiptFees)[];

/**
 * The wire form of the fee fields (JSON-RPC quantities; l1FeeScalar stays a decimal string), to
 * spread into a receipt after its `type`.
 *
 * @example { ...receipt, ...rpcReceiptFees(feesOf(hexToBytes(raw))) }
 */
export function rpcReceiptFees(fees: OpReceiptFees | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of wireOrder) {
    const value = fees?.[key];
    if (value !== undefined) out[key] = typeof value === 'string' ? value : numberToHex(value);
  }
  return out;
}
