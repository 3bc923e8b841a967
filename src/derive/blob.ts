import { FlashlogError } from '../errors.ts';

/**
 * An EIP-4844 blob → the batcher data it carries (specs/protocol/ecotone/derivation.md, "Blob
 * Encoding"). Decoding only; the batcher encodes.
 *
 * A blob is 4096 field elements of 32 bytes. Each field element gives 31 data bytes (its bytes
 * 1..31) and 6 bits (its byte 0, whose top two bits must be zero), so a round of 4 field elements
 * carries 4·31 + 3 = 127 bytes: the three bytes x, y, z are rebuilt from the four 6-bit chunks
 *
 *     x = A[0..6) | B[4..6) << 6      y = B[0..4) | D[0..4) << 4      z = C[0..6) | D[4..6) << 6
 *
 * and the round's bytes come out as A.tail(31) ++ x ++ B.tail(31) ++ y ++ C.tail(31) ++ z ++ D.tail(31).
 * The 1024 rounds give 130,048 bytes: version(1) = 0 ++ length(u24 BE) ++ data ++ zeros.
 *
 * It is an invariant of the encoding that it is bijective: a blob is invalid (ignored by
 * derivation) when a field element has a top bit set, the version is not 0, the length is over
 * 130,044, or any byte after the data is not zero.
 */

export const blobSizeBytes = 131_072;
const fieldElements = 4096;
const roundBytes = 127;
/** 1024 rounds of 127 bytes, less the version byte and the 3 length bytes. */
export const maxBlobDataBytes = (fieldElements / 4) * roundBytes - 4;

export type DecodeBlobErrorType = FlashlogError;

/**
 * The data a blob carries (for a batcher blob: a version byte and frames, as `parseFrames` reads).
 * Throws `DERIVE_BLOB_INVALID` naming the field element or byte that breaks the encoding.
 *
 * @example parseFrames(decodeBlob(blob))
 */
export function decodeBlob(blob: Uint8Array): Uint8Array {
  if (blob.length !== blobSizeBytes) {
    throw new FlashlogError('DERIVE_BLOB_INVALID', `blob: got ${blob.length} bytes, expected ${blobSizeBytes}`);
  }
  const stream = new Uint8Array((fieldElements / 4) * roundBytes);
  let out = 0;
  const chunk = (element: number): number => {
    const byte = blob[element * 32]!;
    if (byte & 0b1100_0000) {
      throw new FlashlogError(
        'DERIVE_BLOB_INVALID',
        `blob field element ${element} (offset ${element * 32}): top bits set (0x${byte.toString(16).padStart(2, '0')}), not a valid encoding`,
      );
    }
    return byte;
  };
  const tail = (element: number) => {
    stream.set(blob.subarray(element * 32 + 1, element * 32 + 32), out);
    out += 31;
  };
  for (let round = 0; round < fieldElements / 4; round++) {
    const first = round * 4;
    const [a, b, c, d] = [chunk(first), chunk(first + 1), chunk(first + 2), chunk(first + 3)];
    tail(first);
    stream[out++] = (a & 0b0011_1111) | ((b & 0b0011_0000) << 2);
    tail(first + 1);
    stream[out++] = (b & 0b0000_1111) | ((d & 0b0000_1111) << 4);
    tail(first + 2);
    stream[out++] = (c & 0b0011_1111) | ((d & 0b0011_0000) << 2);
    tail(first + 3);
  }
  if (stream[0] !== 0) throw new FlashlogError('DERIVE_BLOB_INVALID', `blob encoding version: got ${stream[0]}, expected 0`);
  const length = (stream[1]! << 16) | (stream[2]! << 8) | stream[3]!;
  if (length > maxBlobDataBytes) {
    throw new FlashlogError('DERIVE_BLOB_INVALID', `blob data length: got ${length}, expected at most ${maxBlobDataBytes}`);
  }
  const end = 4 + length;
  const stray = stream.subarray(end).findIndex((byte) => byte !== 0);
  if (stray !== -1) {
    throw new FlashlogError(
      'DERIVE_BLOB_INVALID',
      `blob: byte ${stray} after the ${length} data bytes is not zero (extraneous data past the length)`,
    );
  }
  return stream.slice(4, end);
}
