import { concat, hexToBytes, numberToHex, pad, recoverAddress, toHex, type Address, type Hex } from 'viem';
import { sign } from 'viem/accounts';
import { FlashlogError } from '../errors.ts';

/**
 * Signs a 32-byte digest as Base's enclave does (k256 `sign_hash_sync(..).as_rsy()`):
 * 65 bytes r‖s‖v with v the y-parity, 0 or 1; RFC6979 deterministic, low-S.
 */
export async function signDigest(digest: Hex, privateKey: Hex): Promise<Hex> {
  const signature = await sign({ hash: digest, privateKey });
  return concat([pad(signature.r, { size: 32 }), pad(signature.s, { size: 32 }), numberToHex(signature.yParity ?? 0, { size: 1 })]);
}

/** The address that signed `digest` (accepts v as 0/1 or 27/28). */
export async function recoverSigner(digest: Hex, signature: Hex): Promise<Address> {
  if (hexToBytes(signature).length !== 65)
    throw new FlashlogError('SIGNATURE_INVALID', `signature: expected 65 bytes, got ${hexToBytes(signature).length}`);
  return recoverAddress({ hash: digest, signature });
}

/**
 * The 130-byte TEE proof the L1 verifier takes (`ProofEncoder::encode_proof_bytes`):
 * proofType(1) = 0 ‖ l1OriginHash(32) ‖ l1OriginNumber(u256) ‖ signature(65) with v moved to 27/28,
 * because OpenZeppelin's `tryRecover` does not accept 0/1.
 */
export function l1ProofBytes(l1OriginHash: Hex, l1OriginNumber: number | bigint, signature: Hex): Hex {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) throw new FlashlogError('SIGNATURE_INVALID', `signature: expected 65 bytes, got ${bytes.length}`);
  const v = bytes[64]!;
  const normalised = v === 0 || v === 1 ? v + 27 : v === 27 || v === 28 ? v : undefined;
  if (normalised === undefined) throw new FlashlogError('SIGNATURE_INVALID', `signature: v must be 0, 1, 27 or 28, got ${v}`);
  bytes[64] = normalised;
  return concat(['0x00', pad(l1OriginHash, { size: 32 }), numberToHex(BigInt(l1OriginNumber), { size: 32 }), toHex(bytes)]);
}
