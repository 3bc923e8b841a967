/**
 * The cryptography stateless execution runs on. ethereumjs computes keccak256, secp256k1
 * recovery and the bn254 precompiles in pure JavaScript (@noble/*); on real OP blocks those are
 * a third of the time. `fast` plugs in released native and WebAssembly builds of the reference C
 * and Rust libraries, through ethereumjs's own hooks (`Common`'s `customCrypto`, which the trie,
 * the state manager, transactions, blocks, the bloom filter and the EVM's SHA3 and ECRECOVER read;
 * the EVM's `bn254` option). `reference` is ethereumjs's default, kept so the two can be compared
 * side by side (the bench and the tests). Both give the same results: test/unit/stateless-crypto.test.ts.
 *
 * Libraries (checked when wired, npm registry):
 * - `hash-wasm` (Keccak-256 in WebAssembly; ~2.5 M downloads a month, maintained, release 4.13 in 2026):
 *   fastest here on the small inputs a trie hashes (32-byte keys, ~500-byte nodes);
 * - `secp256k1` (cryptocoinjs's N-API binding of bitcoin-core's libsecp256k1, prebuilt for
 *   linux-x64, darwin-arm64 and win32-x64; ~9 M downloads a month, release 5.0 in 2024): about 25×
 *   @noble/curves' public-key recovery. Loaded from its `bindings` entry: its main entry silently
 *   falls back to the pure-JS `elliptic`, which would be slower than noble;
 * - `rustbn-wasm` (ethereumjs's own WebAssembly build of parity's `bn` crate for the bn254
 *   precompiles, the implementation ethereumjs documents for this option; release 0.4 in 2024).
 * Where the native secp256k1 binding cannot load (no prebuild for the platform), recovery stays on
 * @noble/curves and {@link ExecutionCrypto.name} says so.
 */
import type { CustomCrypto } from '@ethereumjs/common';
import { RustBN254, type EVMOpts } from '@ethereumjs/evm';
import { EthereumJSErrorWithoutCode, calculateSigRecovery, ecrecover as referenceEcrecover, setLengthLeft } from '@ethereumjs/util';
import { createRequire } from 'node:module';

export type CryptoKind = 'fast' | 'reference';

export interface ExecutionCrypto {
  /** What computes what, for logs and the bench (e.g. `keccak hash-wasm, secp256k1 native, bn254 rustbn-wasm`). */
  readonly name: string;
  /** For `new Common({ ..., customCrypto })`. Empty for `reference`. */
  readonly customCrypto: CustomCrypto;
  /** For the EVM's options; undefined keeps ethereumjs's default (@noble/curves). */
  readonly bn254: EVMOpts['bn254'];
}

interface NativeSecp256k1 {
  ecdsaRecover(signature: Uint8Array, recovery: number, message: Uint8Array, compressed: boolean): Uint8Array;
}

const reference: ExecutionCrypto = { name: 'reference (@noble/hashes, @noble/curves)', customCrypto: {}, bn254: undefined };
let fast: Promise<ExecutionCrypto> | undefined;

/**
 * The crypto of one kind, loaded once per process (the WebAssembly modules compile on first use).
 *
 * @example const { customCrypto, bn254 } = await executionCrypto('fast')
 */
export function executionCrypto(kind: CryptoKind = 'fast'): Promise<ExecutionCrypto> {
  if (kind === 'reference') return Promise.resolve(reference);
  fast ??= loadFast();
  return fast;
}

async function loadFast(): Promise<ExecutionCrypto> {
  const [{ createKeccak }, { initRustBN }] = await Promise.all([import('hash-wasm'), import('rustbn-wasm')]);
  const hasher = await createKeccak(256);
  // Synchronous: init, update and digest run back to back, so calls never interleave.
  const keccak256 = (message: Uint8Array): Uint8Array => hasher.init().update(message).digest('binary');
  const secp = nativeSecp256k1();
  const recover = secp
    ? (signature: Uint8Array, recovery: number, message: Uint8Array) => secp.ecdsaRecover(signature, recovery, message, false).subarray(1)
    : undefined;
  const ecrecover: CustomCrypto['ecrecover'] = recover
    ? (msgHash, v, r, s, chainId) => {
        // The same checks as ethereumjs's ecrecover: a recovery id of 0 or 1 after EIP-155.
        const recovery = calculateSigRecovery(v, chainId);
        if (recovery !== 0n && recovery !== 1n) throw EthereumJSErrorWithoutCode('Invalid signature v value');
        const signature = new Uint8Array(64);
        signature.set(setLengthLeft(r, 32), 0);
        signature.set(setLengthLeft(s, 32), 32);
        return recover(signature, Number(recovery), msgHash);
      }
    : referenceEcrecover;
  return {
    name: `keccak hash-wasm, secp256k1 ${secp ? 'native libsecp256k1' : '@noble/curves (no native binding)'}, bn254 rustbn-wasm`,
    customCrypto: { keccak256, ecrecover, ...(recover ? { ecdsaRecover: recover } : {}) },
    bn254: new RustBN254(await initRustBN()),
  };
}

function nativeSecp256k1(): NativeSecp256k1 | undefined {
  try {
    return createRequire(import.meta.url)('secp256k1/bindings') as NativeSecp256k1;
  } catch {
    return undefined;
  }
}
