import type { Hex } from 'viem';
import type { L1Receipt } from './user-deposits.ts';

/**
 * What derivation reads from L1, by block hash: the block's header fields, its transactions (raw
 * EIP-2718 bytes, in order) and its receipts, and blobs by versioned hash. In the enclave every
 * answer comes from hash-checked preimages (src/prover/enclave/l1-preimages.ts); a missing one is
 * a `DERIVE_L1_MISSING` error naming what is missing, never a guess.
 */
export interface L1BlockHeader {
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly baseFeePerGas: bigint;
  readonly mixHash: Hex;
  /** Cancun and later; null before. */
  readonly parentBeaconBlockRoot: Hex | null;
  /** Cancun and later; null before. */
  readonly excessBlobGas: bigint | null;
  readonly transactionsRoot: Hex;
  readonly receiptsRoot: Hex;
}

export interface L1Source {
  /** The header whose keccak is `hash`. */
  header(hash: Hex): L1BlockHeader;
  /** The block's transactions, raw (type byte first for typed ones), in order. */
  transactions(header: L1BlockHeader): Promise<readonly Uint8Array[]>;
  /** The block's receipts, in order (status and logs, each log with its index in the block). */
  receipts(header: L1BlockHeader): Promise<readonly L1Receipt[]>;
  /** The 131,072-byte blob whose KZG commitment has `versionedHash`, checked against it. */
  blob(versionedHash: Hex): Uint8Array;
}
