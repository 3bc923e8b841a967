import { NobleBN254 } from '@ethereumjs/evm';
import { ecrecover as referenceEcrecover } from '@ethereumjs/util';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import fc from 'fast-check';
import { bytesToBigInt, bytesToHex, concat, numberToBytes } from 'viem';
import { describe, expect, it } from 'vitest';
import { executionCrypto } from './crypto.ts';
import { bytesToWord, bytesToWordLoose, wordToBytes } from './fast-interpreter.ts';

/**
 * The fast path against the reference it replaces (ethereumjs's defaults: @noble/hashes,
 * @noble/curves, its NobleBN254), over random inputs, valid and not. The re-execution of real OP
 * blocks to their hashes (test/integration/op-blocks-reexec.test.ts) runs on the fast path.
 */
const fast = await executionCrypto('fast');
const outcome = <T>(f: () => T): { value: T } | { error: true } => {
  try {
    return { value: f() };
  } catch {
    return { error: true };
  }
};
const bytes = (max: number) => fc.uint8Array({ minLength: 0, maxLength: max });
const word = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });

describe('stateless execution crypto: the fast path gives the reference results', () => {
  it('runs on the native libsecp256k1 binding on this platform (not a silent pure-JS fallback)', () => {
    expect(fast.name).toContain('native libsecp256k1');
    expect(fast.bn254).toBeDefined();
  });

  it('keccak256 equals @noble/hashes on any input, calls back to back included', () => {
    fc.assert(
      fc.property(fc.array(bytes(700), { minLength: 1, maxLength: 4 }), (messages) => {
        for (const message of messages) expect(bytesToHex(fast.customCrypto.keccak256!(message))).toBe(bytesToHex(keccak_256(message)));
      }),
      { numRuns: 300 },
    );
  });

  it('ecrecover equals ethereumjs/noble on real signatures, legacy, EIP-155 and typed v', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 48, maxLength: 48 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.constantFrom<'legacy' | 'eip155' | 'typed'>('legacy', 'eip155', 'typed'),
        fc.bigInt({ min: 1n, max: 2n ** 40n }),
        (seed, hash, style, chainId) => {
          const key = secp256k1.utils.randomSecretKey(seed);
          const signature = secp256k1.sign(hash, key, { prehash: false, format: 'recovered' });
          const recovery = BigInt(signature[0]!);
          const [r, s] = [signature.slice(1, 33), signature.slice(33, 65)];
          const v = style === 'legacy' ? 27n + recovery : style === 'eip155' ? 35n + 2n * chainId + recovery : recovery;
          const id = style === 'eip155' ? chainId : undefined;
          const got = fast.customCrypto.ecrecover!(hash, v, r, s, id);
          expect(bytesToHex(got)).toBe(bytesToHex(referenceEcrecover(hash, v, r, s, id)));
          expect(bytesToHex(got)).toBe(bytesToHex(secp256k1.getPublicKey(key, false).slice(1)));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('ecrecover fails exactly where the reference fails (random r, s, v: out of range, zero, no point)', () => {
    const scalar = fc.oneof(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.uint8Array({ minLength: 0, maxLength: 31 }),
      fc.constant(new Uint8Array(32)),
      fc.constant(numberToBytes(secp256k1.Point.CURVE().n, { size: 32 })),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.bigInt({ min: 0n, max: 40n }), scalar, scalar, (hash, v, r, s) => {
        const got = outcome(() => bytesToHex(fast.customCrypto.ecrecover!(hash, v, r, s)));
        expect(got).toEqual(outcome(() => bytesToHex(referenceEcrecover(hash, v, r, s))));
      }),
      { numRuns: 300 },
    );
  });

  it('bn254 add and mul equal NobleBN254 on curve points and on random words', () => {
    const noble = new NobleBN254();
    const generator = concat([numberToBytes(1n, { size: 32 }), numberToBytes(2n, { size: 32 })]);
    const point = (k: bigint) => noble.mul(concat([generator, numberToBytes(k, { size: 32 })]));
    const same = (input: Uint8Array, op: 'add' | 'mul') => {
      const normal = (f: () => Uint8Array) => {
        const result = outcome(f);
        return 'value' in result && result.value.length > 0 ? bytesToHex(result.value) : 'fails';
      };
      expect(normal(() => fast.bn254![op](input))).toBe(normal(() => noble[op](input)));
    };
    fc.assert(
      fc.property(word, word, word, fc.uint8Array({ minLength: 0, maxLength: 160 }), (a, b, k, junk) => {
        same(concat([point(a), point(b)]), 'add');
        same(concat([point(a), numberToBytes(k, { size: 32 })]), 'mul');
        same(junk, 'add');
        same(junk, 'mul');
      }),
      { numRuns: 60 },
    );
  });

  it('word conversions of the interpreter equal viem numberToBytes / bytesToBigInt', () => {
    fc.assert(
      fc.property(fc.oneof(word, fc.bigInt({ min: 0n, max: 2n ** 33n })), (value) => {
        const expected = numberToBytes(value, { size: 32 });
        expect(bytesToHex(wordToBytes(value))).toBe(bytesToHex(expected));
        expect(bytesToWord(expected)).toBe(bytesToBigInt(expected));
        expect(bytesToWord(concat([new Uint8Array(3), expected]).subarray(3))).toBe(value);
        expect(bytesToWordLoose(numberToBytes(value))).toBe(value);
      }),
      { numRuns: 500 },
    );
  });
});
