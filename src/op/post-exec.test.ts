import { RLP } from '@ethereumjs/rlp';
import { bytesToHex, keccak256, parseTransaction, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { checkPostExecInBlock, decodePostExecTx, encodePostExecTx, refundOf } from './post-exec.ts';

/** The spec's encoding built with another RLP library (@ethereumjs/rlp), not flashlog's codec. */
const independent = (version: number, blockNumber: number, entries: [number, number][]): Hex =>
  `0x7d${bytesToHex(RLP.encode([version, blockNumber, entries])).slice(2)}`;

const deposit: Hex = '0x7ef8f8a0'; // only the type byte is read by the block rules
const user: Hex = '0x02f86b0180'; // idem

describe('post-exec transaction (0x7D) codec, specs lagoon/post-exec.md and sdm.md', () => {
  it("viem (today's parser) refuses 0x7d; flashlog's codec reads it", () => {
    const raw = independent(1, 42, [[3, 7]]);
    expect(() => parseTransaction(raw)).toThrow(/0x7d/);
    const tx = decodePostExecTx(raw);
    expect(tx).toMatchObject({ version: 1, blockNumber: 42n, gasRefundEntries: [{ index: 3, gasRefund: 7n }] });
    expect(tx.hash).toBe(keccak256(raw));
    expect(tx.input).toBe(`0x${raw.slice(4)}`);
  });

  it('encodes as 0x7d ‖ rlp([version, blockNumber, [[index, gasRefund]…]]), byte for byte with another RLP encoder', () => {
    for (const [blockNumber, entries] of [
      [
        99,
        [
          [0, 100],
          [5, 200],
        ],
      ],
      [0, [[1, 1]]],
      [
        2 ** 40,
        [
          [127, 128],
          [128, 65_535],
          [300, 2 ** 50],
        ],
      ],
    ] as [number, [number, number][]][]) {
      const ours = encodePostExecTx({
        version: 1,
        blockNumber: BigInt(blockNumber),
        gasRefundEntries: entries.map(([index, gasRefund]) => ({ index, gasRefund: BigInt(gasRefund) })),
      });
      expect(ours.raw).toBe(independent(1, blockNumber, entries));
      expect(decodePostExecTx(ours.raw).gasRefundEntries.map((e) => [e.index, Number(e.gasRefund)])).toEqual(entries);
    }
  });

  it('the hash depends on the block number (post-exec.md § Block Number)', () => {
    expect(decodePostExecTx(independent(1, 42, [[3, 7]])).hash).not.toBe(decodePostExecTx(independent(1, 43, [[3, 7]])).hash);
  });

  it('refuses, naming the field: another version, a wrapped list, a wrong entry, trailing bytes, a non-canonical integer', () => {
    expect(() => decodePostExecTx(independent(2, 42, [[3, 7]]))).toThrow(/payload\.version: 2/);
    expect(() => decodePostExecTx(`0x7d${bytesToHex(RLP.encode([[1, 42, [[3, 7]]]])).slice(2)}`)).toThrow(/expected 3 fields/);
    expect(() => decodePostExecTx(`0x7d${bytesToHex(RLP.encode([1, 42, [[3, 7, 9]]])).slice(2)}`)).toThrow(
      /gasRefundEntries\[0\]: expected \[index, gasRefund\]/,
    );
    expect(() => decodePostExecTx(`${independent(1, 42, [[3, 7]])}00`)).toThrow(/not RLP/);
    expect(() => decodePostExecTx(`0x7d${bytesToHex(RLP.encode([1, 42, [[3, 2n ** 64n]]])).slice(2)}`)).toThrow(
      /gasRefundEntries\[0\]\.gasRefund: .* does not fit in uint64/,
    );
    // blockNumber 42 written as 0x002a: the same value, another encoding.
    expect(() => decodePostExecTx('0x7dc80182002ac3c20307')).toThrow(/leading zero/);
    expect(() => decodePostExecTx('0x02c0')).toThrow(/expected 0x7d/);
  });

  it('block rules (post-exec.md § Block-Level Structural Rules, sdm.md § Validity Rules) name what breaks them', () => {
    const pe = (entries: [number, number][], block = 12) => independent(1, block, entries);
    expect(checkPostExecInBlock([deposit, user], 12n, true)).toBeUndefined();
    expect(
      checkPostExecInBlock(
        [
          deposit,
          user,
          user,
          pe([
            [1, 5],
            [2, 9],
          ]),
        ],
        12n,
        true,
      )?.gasRefundEntries,
    ).toHaveLength(2);
    expect(() => checkPostExecInBlock([deposit, user, pe([[1, 5]])], 12n, false)).toThrow(/transaction 2 .* before Lagoon/);
    expect(() => checkPostExecInBlock([deposit, pe([[2, 5]]), user], 12n, true)).toThrow(/transaction 1 .* not the last of 3/);
    expect(() => checkPostExecInBlock([deposit, user, pe([[1, 5]]), pe([[1, 5]])], 12n, true)).toThrow(/transactions 2, 3 .* at most one/);
    expect(() => checkPostExecInBlock([deposit, user, pe([[1, 5]], 11)], 12n, true)).toThrow(/blockNumber 11 is not the block's number/);
    expect(() => checkPostExecInBlock([deposit, user, pe([])], 12n, true)).toThrow(/gasRefundEntries is empty/);
    expect(() => checkPostExecInBlock([deposit, user, pe([[1, 0]])], 12n, true)).toThrow(/gasRefundEntries\[0\]\.gasRefund is 0/);
    expect(() =>
      checkPostExecInBlock(
        [
          deposit,
          user,
          user,
          pe([
            [2, 1],
            [1, 1],
          ]),
        ],
        12n,
        true,
      ),
    ).toThrow(/\[1\]\.index 1 does not follow 2/);
    expect(() => checkPostExecInBlock([deposit, user, pe([[0, 1]])], 12n, true)).toThrow(/index 0 is a deposit/);
    expect(() => checkPostExecInBlock([deposit, user, pe([[2, 1]])], 12n, true)).toThrow(/index 2 is the post-exec transaction/);
  });

  it('refundOf: the entry of an index, 0 without one', () => {
    const tx = decodePostExecTx(
      independent(1, 1, [
        [1, 5],
        [4, 9],
      ]),
    );
    expect([0, 1, 2, 4].map((i) => refundOf(tx, i))).toEqual([0n, 5n, 0n, 9n]);
    expect(refundOf(undefined, 1)).toBe(0n);
  });
});
