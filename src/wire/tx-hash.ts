import { keccak_256 } from '@noble/hashes/sha3.js';

/**
 * keccak256 of an EIP-2718 transaction given as 0x-hex: its hash.
 * viem's `keccak256(hex)` converts hex to bytes and back in JavaScript, which costs more than the
 * hash itself on multi-kilobyte transactions; Node's native hex codec halves the cost of assembly.
 */
export function transactionHash(raw: `0x${string}`): `0x${string}` {
  return `0x${Buffer.from(keccak_256(Buffer.from(raw.slice(2), 'hex'))).toString('hex')}`;
}
