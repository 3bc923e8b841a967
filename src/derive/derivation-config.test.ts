import { describe, expect, it } from 'vitest';
import { blobUpdateFraction } from './derivation-config.ts';
import { l1BlobBaseFee } from './attributes.ts';

/**
 * The L1 blob schedules against go-ethereum v1.17.10's chainspecs (mainnet, Sepolia, Hoodi): the
 * fraction in force at, and just before, each fork's time; refused where the schedule is not carried.
 */
describe('blobUpdateFraction', () => {
  it("follows Ethereum mainnet's Cancun, Prague, BPO1 and BPO2", () => {
    expect(blobUpdateFraction(1, 1710338135n, 1n)).toBe(3_338_477n);
    expect(blobUpdateFraction(1, 1746612310n, 1n)).toBe(3_338_477n);
    expect(blobUpdateFraction(1, 1746612311n, 1n)).toBe(5_007_716n);
    // Osaka itself keeps Prague's parameters; BPO1 changes them.
    expect(blobUpdateFraction(1, 1764798551n, 1n)).toBe(5_007_716n);
    expect(blobUpdateFraction(1, 1765290071n, 1n)).toBe(8_346_193n);
    expect(blobUpdateFraction(1, 1767747671n, 1n)).toBe(11_684_671n);
    expect(blobUpdateFraction(1, 1_795_000_000n, 1n)).toBe(11_684_671n);
  });

  it("refuses Sepolia past Amsterdam and a time before an L1's first blobs; another L1 runs Prague's", () => {
    expect(blobUpdateFraction(11155111, 1761607008n, 5n)).toBe(11_684_671n);
    expect(() => blobUpdateFraction(11155111, 1791294816n, 9n)).toThrow(
      /L1 block 9: Sepolia's blob schedule after 1791294816 is not carried/,
    );
    expect(() => blobUpdateFraction(1, 1_700_000_000n, 3n)).toThrow(/L1 block 3: Ethereum mainnet had no blobs/);
    expect(blobUpdateFraction(900, 0n, 0n)).toBe(5_007_716n);
    expect(blobUpdateFraction(undefined, 0n, 0n)).toBe(5_007_716n);
  });

  it('gives the blob base fee the fraction sets (EIP-4844: 1 wei at zero excess, rising with it)', () => {
    expect(l1BlobBaseFee(0n, blobUpdateFraction(1, 1767747671n, 1n))).toBe(1n);
    const excess = 100_000_000n;
    expect(l1BlobBaseFee(excess, 11_684_671n)).toBeLessThan(l1BlobBaseFee(excess, 5_007_716n));
  });
});
