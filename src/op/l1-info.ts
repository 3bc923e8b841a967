import { decodeFunctionData, hexToBigInt, hexToNumber, parseAbi, size, slice, toFunctionSelector, type Hex } from 'viem';
import { parseTransaction } from 'viem/op-stack';
import { FlashlogError } from '../errors.ts';

/**
 * The L1-info deposit, the first transaction of every OP Stack block: a call to the L1Block
 * predeploy whose calldata carries the L1 origin and the fee parameters (OP Stack specs,
 * protocol/deposits.md "L1 Attributes Deposited Transaction", ecotone/isthmus/jovian l1-attributes.md).
 *
 * Ecotone and later pack the arguments after the 4-byte selector, big-endian, no ABI padding:
 *
 *   offset  size  field
 *   4       4     baseFeeScalar
 *   8       4     blobBaseFeeScalar
 *   12      8     sequenceNumber
 *   20      8     timestamp
 *   28      8     l1BlockNumber
 *   36      32    baseFee
 *   68      32    blobBaseFee
 *   100     32    l1BlockHash
 *   132     32    batcherHash
 *   164     4     operatorFeeScalar      (Isthmus, `setL1BlockValuesIsthmus()`, 176 bytes)
 *   168     8     operatorFeeConstant    (Isthmus)
 *   176     2     daFootprintGasScalar   (Jovian, `setL1BlockValuesJovian()`, 178 bytes)
 *
 * A fork's first block still carries the previous fork's form (the L1Block code that accepts the
 * new one is deployed by that block's upgrade deposits).
 */
const bedrockSignature = 'function setL1BlockValues(uint64,uint64,uint256,bytes32,uint64,bytes32,uint256,uint256)';
const bedrockAbi = parseAbi([bedrockSignature]);
export const l1InfoSelectors = {
  bedrock: toFunctionSelector(bedrockSignature),
  ecotone: toFunctionSelector('setL1BlockValuesEcotone()'),
  isthmus: toFunctionSelector('setL1BlockValuesIsthmus()'),
  jovian: toFunctionSelector('setL1BlockValuesJovian()'),
} as const;
export type L1InfoForm = keyof typeof l1InfoSelectors;

/** Calldata length of each packed form (op-geth's IsthmusL1AttributesLen, JovianL1AttributesLen). */
export const l1InfoLength = { ecotone: 164, isthmus: 176, jovian: 178 } as const;

export interface L1Info {
  readonly form: L1InfoForm;
  readonly sequenceNumber?: bigint;
  readonly l1BlockNumber?: bigint;
  readonly l1Timestamp?: bigint;
  readonly l1BlockHash?: Hex;
  /** The batcher address, left-padded to 32 bytes. */
  readonly batcherHash?: Hex;
  /** The L1 origin's base fee (every form; the receipts' `l1GasPrice`). */
  readonly l1BaseFee?: bigint;
  /** Ecotone and later: the L1 origin's blob base fee. */
  readonly blobBaseFee?: bigint;
  /** Bedrock form only: the fee overhead and scalar (ABI words 6 and 7). */
  readonly overhead?: bigint;
  readonly scalar?: bigint;
  readonly baseFeeScalar?: number;
  readonly blobBaseFeeScalar?: number;
  readonly operatorFeeScalar?: number;
  readonly operatorFeeConstant?: bigint;
  /** Jovian: the DA footprint gas scalar, as the L1-info deposit carries it (zero stays zero). */
  readonly daFootprintGasScalar?: number;
}

const uint = (data: Hex, from: number, bytes: number) => hexToBigInt(slice(data, from, from + bytes));

/**
 * Parses the calldata of an L1-info deposit, naming what does not fit.
 *
 * @example parseL1Info(l1InfoCalldata(transactions)).daFootprintGasScalar
 */
export function parseL1Info(data: Hex, where = 'L1-info deposit'): L1Info {
  if (size(data) < 4) throw new FlashlogError('BLOCK_INVALID', `${where}: calldata of ${size(data)} bytes has no selector`);
  const selector = slice(data, 0, 4);
  const form = (Object.keys(l1InfoSelectors) as L1InfoForm[]).find((name) => l1InfoSelectors[name] === selector);
  if (!form) throw new FlashlogError('BLOCK_INVALID', `${where}: unknown selector ${selector}`);
  if (form === 'bedrock') {
    let args: readonly unknown[];
    try {
      args = decodeFunctionData({ abi: bedrockAbi, data }).args;
    } catch {
      throw new FlashlogError(
        'BLOCK_INVALID',
        `${where}: bedrock calldata must be 8 ABI words after the selector, got ${size(data)} bytes`,
      );
    }
    const [l1BlockNumber, l1Timestamp, l1BaseFee, l1BlockHash, sequenceNumber, batcherHash, overhead, scalar] = args as [
      bigint,
      bigint,
      bigint,
      Hex,
      bigint,
      Hex,
      bigint,
      bigint,
    ];
    return { form, l1BlockNumber, l1Timestamp, l1BaseFee, l1BlockHash, sequenceNumber, batcherHash, overhead, scalar };
  }
  const expected = l1InfoLength[form];
  // op-geth reads these forms with a lower bound only (a later fork may append fields).
  if (size(data) < expected)
    throw new FlashlogError('BLOCK_INVALID', `${where}: ${form} calldata must be at least ${expected} bytes, got ${size(data)}`);
  return {
    form,
    baseFeeScalar: Number(uint(data, 4, 4)),
    blobBaseFeeScalar: Number(uint(data, 8, 4)),
    sequenceNumber: uint(data, 12, 8),
    l1BlockNumber: uint(data, 28, 8),
    l1Timestamp: uint(data, 20, 8),
    l1BlockHash: slice(data, 100, 132),
    batcherHash: slice(data, 132, 164),
    l1BaseFee: uint(data, 36, 32),
    blobBaseFee: uint(data, 68, 32),
    ...(form === 'ecotone' ? {} : { operatorFeeScalar: Number(uint(data, 164, 4)), operatorFeeConstant: uint(data, 168, 8) }),
    ...(form === 'jovian' ? { daFootprintGasScalar: hexToNumber(slice(data, 176, 178)) } : {}),
  };
}

/**
 * The calldata of a block's first transaction, which must be a deposit (the L1-info deposit).
 *
 * @example l1InfoCalldata(attributes.transactions)
 */
export function l1InfoCalldata(transactions: readonly Hex[]): Hex {
  const first = transactions[0];
  if (first === undefined || !first.toLowerCase().startsWith('0x7e'))
    throw new FlashlogError(
      'BLOCK_INVALID',
      'payload.transactions[0]: the L1-info deposit is missing (the first transaction is not a deposit)',
    );
  return ((parseTransaction(first) as { data?: Hex }).data ?? '0x') as Hex;
}
