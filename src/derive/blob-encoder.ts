import { FlashlogError } from '../errors.ts';
import { blobSizeBytes, maxBlobDataBytes } from './blob.ts';

/**
 * Batcher data → an EIP-4844 blob (specs/protocol/ecotone/derivation.md, "Blob Encoding", the
 * batcher's side): the inverse of `decodeBlob` in blob.ts, which states the layout. The stream
 * `version(0) ++ length(u24 BE) ++ data ++ zeros` is cut into 1024 rounds of 127 bytes; each round
 * fills 4 field elements with 31 bytes each and spreads its 3 remaining bytes x, y, z over the
 * elements' first bytes, 6 bits each:
 *
 *     A[0] = x & 0x3f                      B[0] = (y & 0x0f) | (x & 0xc0) >> 2
 *     C[0] = z & 0x3f                      D[0] = (z & 0xc0) >> 2 | (y & 0xf0) >> 4
 *
 * It is an invariant of the encoding that every field element's top two bits are zero, so each is
 * below the BLS12-381 scalar modulus and the blob is valid for KZG.
 */

export type EncodeBlobErrorType = FlashlogError;

/**
 * The blob carrying `data` (for a batcher blob: a version byte and frames). Throws
 * `DERIVE_BLOB_INVALID` when `data` is longer than a blob holds (130,044 bytes).
 *
 * @example decodeBlob(encodeBlob(encodeFrames(frames))) // the same bytes
 */
export function encodeBlob(data: Uint8Array): Uint8Array {
  if (data.length > maxBlobDataBytes) {
    throw new FlashlogError('DERIVE_BLOB_INVALID', `blob data: got ${data.length} bytes, expected at most ${maxBlobDataBytes}`);
  }
  const stream = new Uint8Array(maxBlobDataBytes + 4);
  stream.set([0, (data.length >> 16) & 0xff, (data.length >> 8) & 0xff, data.length & 0xff]);
  stream.set(data, 4);
  const blob = new Uint8Array(blobSizeBytes);
  for (let round = 0; round < blobSizeBytes / 128; round++) {
    const read = round * 127;
    const write = round * 128;
    const [x, y, z] = [stream[read + 31]!, stream[read + 63]!, stream[read + 95]!];
    const element = (index: number, first: number, tailAt: number) => {
      blob[write + index * 32] = first;
      blob.set(stream.subarray(read + tailAt, read + tailAt + 31), write + index * 32 + 1);
    };
    element(0, x & 0b0011_1111, 0);
    element(1, (y & 0b0000_1111) | ((x & 0b1100_0000) >> 2), 32);
    element(2, z & 0b0011_1111, 64);
    element(3, ((z & 0b1100_0000) >> 2) | ((y & 0b1111_0000) >> 4), 96);
  }
  return blob;
}
