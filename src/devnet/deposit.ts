import { concat, keccak256, numberToHex, pad, toFunctionSelector, toRlp, type Hex } from 'viem';

/**
 * OP deposit transactions (EIP-2718 type 0x7e), as the OP spec `deposits.md` defines them:
 *
 *   0x7e || rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data])
 *
 * They are never signed; `from` is taken as given. The first transaction of every OP block is
 * the L1-attributes deposit from the depositor account to the L1Block predeploy.
 */
export interface Deposit {
  readonly sourceHash: Hex;
  readonly from: Hex;
  /** null for a contract creation. */
  readonly to: Hex | null;
  readonly mint: bigint;
  readonly value: bigint;
  readonly gas: bigint;
  readonly isSystemTx: boolean;
  readonly data: Hex;
}

const quantityBytes = (value: bigint): Hex => (value === 0n ? '0x' : numberToHex(value));

export function encodeDeposit(deposit: Deposit): Hex {
  return concat([
    '0x7e',
    toRlp([
      deposit.sourceHash,
      deposit.from,
      deposit.to ?? '0x',
      quantityBytes(deposit.mint),
      quantityBytes(deposit.value),
      quantityBytes(deposit.gas),
      deposit.isSystemTx ? '0x01' : '0x',
      deposit.data,
    ]),
  ]);
}

export const L1_BLOCK_PREDEPLOY: Hex = '0x4200000000000000000000000000000000000015';

/** Source hash of a deposit: keccak256(bytes32(domain) || keccak256(payload)) (spec: domain 0 user, 1 L1 info). */
export function sourceHash(domain: 0n | 1n, l1BlockHash: Hex, index: bigint): Hex {
  return keccak256(
    concat([pad(numberToHex(domain), { size: 32 }), keccak256(concat([l1BlockHash, pad(numberToHex(index), { size: 32 })]))]),
  );
}

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

const ISTHMUS_SELECTOR = toFunctionSelector('setL1BlockValuesIsthmus()');

/**
 * Calldata of `setL1BlockValuesIsthmus()` (OP spec `isthmus/l1-attributes.md`): the selector then
 * tightly packed baseFeeScalar u32, blobBaseFeeScalar u32, sequenceNumber u64, timestamp u64,
 * number u64, basefee u256, blobBaseFee u256, hash b32, batcherHash b32, operatorFeeScalar u32,
 * operatorFeeConstant u64 (176 bytes).
 */
export function l1AttributesCalldata(attributes: L1Attributes): Hex {
  const uint = (value: bigint | number, size: number) => pad(numberToHex(value), { size });
  return concat([
    ISTHMUS_SELECTOR,
    uint(attributes.baseFeeScalar, 4),
    uint(attributes.blobBaseFeeScalar, 4),
    uint(attributes.sequenceNumber, 8),
    uint(attributes.l1Timestamp, 8),
    uint(attributes.l1Number, 8),
    uint(attributes.l1BaseFee, 32),
    uint(attributes.l1BlobBaseFee, 32),
    attributes.l1Hash,
    attributes.batcherHash,
    uint(attributes.operatorFeeScalar, 4),
    uint(attributes.operatorFeeConstant, 8),
  ]);
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

/** The L1-attributes deposit that opens L2 block `l2Number`. */
export function l1AttributesDeposit(attributes: L1Attributes, l2Number: bigint): Hex {
  return encodeDeposit({
    sourceHash: sourceHash(1n, attributes.l1Hash, attributes.sequenceNumber),
    from: l1AttributesSender(l2Number),
    to: L1_BLOCK_PREDEPLOY,
    mint: 0n,
    value: 0n,
    gas: 1_000_000n,
    isSystemTx: false,
    data: l1AttributesCalldata(attributes),
  });
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
