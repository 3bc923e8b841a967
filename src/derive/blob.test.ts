import fc from 'fast-check';
import { bytesToHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { FlashlogError } from '../errors.ts';
import { specBlob } from '../../test/helpers/op-blob.ts';
import { decodeBlob, maxBlobDataBytes } from './blob.ts';

const messageOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FlashlogError);
    return (error as Error).message;
  }
  throw new Error('expected an error');
};

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
