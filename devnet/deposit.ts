import type { Hex } from 'viem';
import { encodeDeposit } from '../src/op/deposit-tx.ts';
import { l1InfoCalldataOf, l1InfoDeposit, type L1BlockInfo } from '../src/derive/l1-info-deposit.ts';

export interface L1Attributes {
  readonly l1Number: bigint;
  readonly l1Timestamp: bigint;
  readonly l1BaseFee: bigint;
  readonly l1BlobBaseFee: bigint;
  readonly l1Hash: Hex;
  readonly sequenceNumber: bigint;
  readonly batcherHash: Hex;
  readonly baseFeeScalar: number;
  readonly blobBaseFeeScalar: number;
  readonly operatorFeeScalar: number;
  readonly operatorFeeConstant: bigint;
}

/** The devnet's L1 attributes as derivation's L1-info values (Isthmus form: no Bedrock fields, no DA scalar). */
function l1BlockInfo(attributes: L1Attributes): L1BlockInfo {
  return {
    number: attributes.l1Number,
    timestamp: attributes.l1Timestamp,
    baseFee: attributes.l1BaseFee,
    blobBaseFee: attributes.l1BlobBaseFee,
    hash: attributes.l1Hash,
    sequenceNumber: attributes.sequenceNumber,
    batcherHash: attributes.batcherHash,
    l1FeeOverhead: zeroHash,
    l1FeeScalar: zeroHash,
    baseFeeScalar: attributes.baseFeeScalar,
    blobBaseFeeScalar: attributes.blobBaseFeeScalar,
    operatorFeeScalar: attributes.operatorFeeScalar,
    operatorFeeConstant: attributes.operatorFeeConstant,
    daFootprintGasScalar: 0,
  };
}
const zeroHash: Hex = `0x${'00'.repeat(32)}`;
/** The devnet's blocks run Isthmus, settled: the L1-info deposit takes the Isthmus form. */
const isthmusRules = {
  active: (fork: string) => ['regolith', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus'].includes(fork),
  activationBlock: () => false,
};

/** Calldata of `setL1BlockValuesIsthmus()` (layout in src/op/l1-info.ts), by derivation's one builder. */
export function l1AttributesCalldata(attributes: L1Attributes): Hex {
  return l1InfoCalldataOf(l1BlockInfo(attributes), 'isthmus');
}

/**
 * The `from` of the devnet's L1-attributes deposit of L2 block `l2Number`:
 * 0xdeaddeaddeaddeaddeaddead || uint64(l2Number). On OP chains it is the depositor account
 * (0xdead…0001), but EDR's mempool reads a deposit's nonce as 0 and refuses a deposit from an
 * account whose nonce is not 0, so every block's deposit needs a fresh sender. The devnet's
 * L1Block accepts any caller (contracts/DevnetL1Block.sol).
 */
export function l1AttributesSender(l2Number: bigint): Hex {
  return `0xdeaddeaddeaddeaddeaddead${l2Number.toString(16).padStart(16, '0')}`;
}

/**
 * The L1-attributes deposit that opens L2 block `l2Number`: derivation's L1-info deposit, sent
 * from the devnet's per-block sender.
 */
export function l1AttributesDeposit(attributes: L1Attributes, l2Number: bigint): Hex {
  return encodeDeposit({ ...l1InfoDeposit(l1BlockInfo(attributes), isthmusRules), from: l1AttributesSender(l2Number) });
}

/** The L1Block storage that `setL1BlockValuesIsthmus(attributes)` leaves (slot index -> value), for genesis. */
export function l1BlockStorage(attributes: L1Attributes): { index: bigint; value: bigint }[] {
  return [
    { index: 0n, value: (attributes.l1Timestamp << 64n) | attributes.l1Number },
    { index: 1n, value: attributes.l1BaseFee },
    { index: 2n, value: BigInt(attributes.l1Hash) },
    {
      index: 3n,
      value: (BigInt(attributes.baseFeeScalar) << 96n) | (BigInt(attributes.blobBaseFeeScalar) << 64n) | attributes.sequenceNumber,
    },
    { index: 4n, value: BigInt(attributes.batcherHash) },
    { index: 7n, value: attributes.l1BlobBaseFee },
    { index: 8n, value: (BigInt(attributes.operatorFeeScalar) << 64n) | attributes.operatorFeeConstant },
  ];
}
