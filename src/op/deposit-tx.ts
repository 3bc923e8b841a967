import { concat, keccak256, numberToHex, pad, toRlp, type Hex } from 'viem';

/**
 * OP deposit transactions (EIP-2718 type 0x7e), as the OP spec `protocol/deposits.md` defines them:
 *
 *   0x7e || rlp([sourceHash, from, to, mint, value, gas, isSystemTx, data])
 *
 * They are never signed; `from` is taken as given.
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

/**
 * The EIP-2718 bytes of a deposit.
 *
 * @example encodeDeposit(l1InfoDeposit(info, rules)) // '0x7ef8…'
 */
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

/**
 * The source domains of `deposits.md` "Source hash computation": 0 user deposits (L1 block hash,
 * log index), 1 the L1-info deposit (L1 block hash, sequence number).
 */
export const sourceDomain = { userDeposit: 0n, l1Info: 1n } as const;

/**
 * Source hash of a deposit: keccak256(bytes32(domain) || keccak256(l1BlockHash || bytes32(index))).
 *
 * @example sourceHash(sourceDomain.userDeposit, l1Block.hash, BigInt(log.logIndex))
 */
export function sourceHash(domain: bigint, l1BlockHash: Hex, index: bigint): Hex {
  return keccak256(
    concat([pad(numberToHex(domain), { size: 32 }), keccak256(concat([l1BlockHash, pad(numberToHex(index), { size: 32 })]))]),
  );
}
