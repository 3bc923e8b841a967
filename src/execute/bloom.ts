import { keccak_256 } from '@noble/hashes/sha3.js';

/**
 * The 2048-bit logs bloom of the Yellow Paper (section 4.3.1): for the address and each topic of
 * each log, three bits, each the low 11 bits of a byte pair of keccak256 of the item. Written by
 * hand because viem ships no bloom builder; it is eight lines.
 */
export function logsBloom(logs: readonly { readonly address: string; readonly topics: readonly string[] }[]): `0x${string}` {
  const bloom = new Uint8Array(256);
  const add = (hex: string) => {
    const hash = keccak_256(Buffer.from(hex.slice(2), 'hex'));
    for (let i = 0; i < 6; i += 2) {
      const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
      bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
    }
  };
  for (const log of logs) {
    add(log.address);
    for (const topic of log.topics) add(topic);
  }
  return `0x${Buffer.from(bloom).toString('hex')}`;
}
