import fc from 'fast-check';
import { bytesToHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { FlashlogError } from '../errors.ts';
import { blobSizeBytes, decodeBlob, maxBlobDataBytes } from './blob.ts';

const messageOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FlashlogError);
    return (error as Error).message;
  }
  throw new Error('expected an error');
};

/**
 * The blob encoding as the spec writes it (specs/protocol/ecotone/derivation.md, "Blob Encoding":
 * the `read`/`write` pseudocode, the batcher's side), to give the decoder blobs to read. The Go
 * peer holds the decoder against op-service's own encoder.
 */
function specBlob(data: Uint8Array): Uint8Array {
  const stream = new Uint8Array(1024 * 127);
  stream.set([0, (data.length >> 16) & 0xff, (data.length >> 8) & 0xff, data.length & 0xff]);
  stream.set(data, 4);
  const blob = new Uint8Array(blobSizeBytes);
  let read = 0;
  let write = 0;
  const take = (n: number) => stream.subarray(read, (read += n));
  const put = (byte: number, tail: Uint8Array) => {
    blob[write] = byte;
    blob.set(tail, write + 1);
    write += 32;
  };
  for (let round = 0; round < 1024; round++) {
    const tailA = take(31);
    const x = take(1)[0]!;
    put(x & 0b0011_1111, tailA);
    const tailB = take(31);
    const y = take(1)[0]!;
    put((y & 0b0000_1111) | ((x & 0b1100_0000) >> 2), tailB);
    const tailC = take(31);
    const z = take(1)[0]!;
    put(z & 0b0011_1111, tailC);
    const tailD = take(31);
    put(((z & 0b1100_0000) >> 2) | ((y & 0b1111_0000) >> 4), tailD);
  }
  return blob;
}

describe('decodeBlob', () => {
  it('reads back any data the spec encodes, up to the largest', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (data) => {
        expect(bytesToHex(decodeBlob(specBlob(data)))).toBe(bytesToHex(data));
      }),
      { numRuns: 30 },
    );
    const largest = Uint8Array.from({ length: maxBlobDataBytes }, (_, i) => (i * 7 + 3) & 0xff);
    expect(bytesToHex(decodeBlob(specBlob(largest)))).toBe(bytesToHex(largest));
  });

  it('refuses a blob that breaks the encoding, naming what', () => {
    const blob = specBlob(Uint8Array.of(0, 1, 2, 3));
    const set = (index: number, value: number) => {
      const copy = Uint8Array.from(blob);
      copy[index] = value;
      return copy;
    };
    expect(messageOf(() => decodeBlob(blob.subarray(1)))).toBe('blob: got 131071 bytes, expected 131072');
    expect(messageOf(() => decodeBlob(set(32 * 5, 0x40)))).toContain('blob field element 5 (offset 160): top bits set (0x40)');
    expect(messageOf(() => decodeBlob(set(1, 1)))).toBe('blob encoding version: got 1, expected 0');
    expect(messageOf(() => decodeBlob(set(2, 0xff)))).toContain('blob data length: got 16711684, expected at most 130044');
    expect(messageOf(() => decodeBlob(set(32 * 100 + 7, 9)))).toContain('after the 4 data bytes is not zero');
  });
});
