import { bytesToHex, hexToBytes, keccak256, sha256, type Hex } from 'viem';
import type { Preimage, PreimageKey } from '../enclave-protocol.ts';
import { EnclaveRefusal } from './refusal.ts';

/** Checks every Keccak256/Sha256 preimage against its key and indexes all of them. */
export function preimageStore(preimages: readonly Preimage[]) {
  const byKey = new Map<string, Uint8Array>();
  const byKeccak = new Map<Hex, Uint8Array>();
  preimages.forEach(({ key, value }, index) => {
    if (key.type === 'keccak256' || key.type === 'sha256') {
      const digest = key.type === 'keccak256' ? keccak256(value) : sha256(value);
      if (bytesToHex(hexToBytes(digest).slice(1)) !== bytesToHex(key.data)) {
        throw new EnclaveRefusal(`preimage ${index} (${key.type}): value does not hash to its key`);
      }
      if (key.type === 'keccak256') byKeccak.set(digest, value);
    }
    byKey.set(`${key.type}:${bytesToHex(key.data)}`, value);
  });
  return {
    local: (id: number) => {
      const data = new Uint8Array(31);
      new DataView(data.buffer).setBigUint64(23, BigInt(id), false);
      return byKey.get(`local:${bytesToHex(data)}`);
    },
    keccak: (hash: Hex) => byKey.get(`keccak256:${bytesToHex(hexToBytes(hash).slice(1))}`),
    /** Any preimage by its key (a `sha256` one by digest, a `blob` one: l1-preimages.ts). */
    get: (key: PreimageKey) => byKey.get(`${key.type}:${bytesToHex(key.data)}`),
    /** Every keccak preimage, for scanning (headers). */
    keccakValues: () => [...byKey.entries()].filter(([k]) => k.startsWith('keccak256:')).map(([, v]) => v),
    /** The keccak preimages by full hash: the witness re-execution reads. */
    witness: (): ReadonlyMap<Hex, Uint8Array> => byKeccak,
  };
}
export type PreimageStore = ReturnType<typeof preimageStore>;
