import { fromRlp, keccak256, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';
import { emptyTrieRoot } from '../../evm/op/witness-state.ts';

type RlpItem = Hex | RlpItem[];

/**
 * Walks the state trie from `stateRoot` to an account and returns its storage root, reading
 * trie nodes from hash-verified keccak preimages (`nodeByHash`). Hand-written: a read-only walk of
 * a Merkle-Patricia path needs only RLP (from viem), not a trie library.
 *
 * Node grammar: branch = 17 items (16 children + value); leaf/extension = [hex-prefix path, value|child];
 * a child is a 32-byte hash, or the node itself inline when its RLP is shorter than 32 bytes.
 * Returns undefined when a node on the path is missing (the caller decides what that means).
 */
export function accountStorageRoot(stateRoot: Hex, address: Hex, nodeByHash: (hash: Hex) => Uint8Array | undefined): Hex | undefined {
  const path = keccak256(address)
    .slice(2)
    .split('')
    .map((c) => Number.parseInt(c, 16));
  let at = 0;
  let node: RlpItem | undefined;
  const load = (ref: RlpItem): RlpItem | undefined => {
    if (Array.isArray(ref)) return ref;
    if (ref === '0x') return undefined;
    const raw = nodeByHash(ref);
    if (!raw) return undefined;
    return fromRlp(raw, 'hex') as RlpItem;
  };
  node = load(stateRoot);
  if (node === undefined) return stateRoot === emptyTrieRoot ? emptyTrieRoot : undefined;
  for (let depth = 0; depth < 130; depth++) {
    if (!Array.isArray(node)) throw new FlashlogError('TRIE_INVALID', 'state trie: a node is not a list');
    if (node.length === 17) {
      if (at === path.length) throw new FlashlogError('TRIE_INVALID', 'state trie: value in a branch on an account path');
      const child = node[path[at]!]!;
      at++;
      if (child === '0x') return emptyTrieRoot; // account absent
      const next = load(child);
      if (next === undefined) return undefined;
      node = next;
      continue;
    }
    if (node.length !== 2 || typeof node[0] !== 'string')
      throw new FlashlogError('TRIE_INVALID', `state trie: node of ${node.length} items`);
    const encoded = node[0].slice(2);
    const flag = Number.parseInt(encoded[0] ?? '0', 16);
    const nibbles = encoded
      .slice(flag & 1 ? 1 : 2)
      .split('')
      .map((c) => Number.parseInt(c, 16));
    const matches = nibbles.every((nibble, i) => path[at + i] === nibble);
    if (!matches) return emptyTrieRoot; // path diverges: account absent
    at += nibbles.length;
    if (flag >= 2) {
      if (at !== path.length || typeof node[1] !== 'string') throw new FlashlogError('TRIE_INVALID', 'state trie: leaf at the wrong depth');
      const account = fromRlp(node[1], 'hex');
      if (!Array.isArray(account) || account.length !== 4 || typeof account[2] !== 'string') {
        throw new FlashlogError('TRIE_INVALID', 'state trie: account leaf is not [nonce, balance, storageRoot, codeHash]');
      }
      return account[2] as Hex;
    }
    const next = load(node[1]!);
    if (next === undefined) return undefined;
    node = next;
  }
  throw new FlashlogError('TRIE_INVALID', 'state trie: path too deep');
}
