import { LeafMPTNode, type MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { MerkleStateManager } from '@ethereumjs/statemanager';
import { createAccount, createAddressFromString } from '@ethereumjs/util';
import { bytesToHex, hexToBytes, keccak256, type Hex } from 'viem';
import { emptyTrieRoot } from '../../src/evm/op/witness-state.ts';

const emptyCodeHash = keccak256('0x');

/**
 * Every node of a state (the account trie, every storage trie) and every code, by keccak256: a
 * witness for any block on top of it. Walks the state manager's trie (ethereumjs keeps it in the
 * protected `_trie`; its database also holds the code, keyed by code hash).
 */
export async function addStateNodes(state: MerkleStateManager, into: Map<Hex, Uint8Array>): Promise<void> {
  const trie = (state as unknown as { _trie: MerklePatriciaTrie })._trie;
  const add = async (node: { serialize(): Uint8Array }) => {
    const rlp = node.serialize();
    into.set(keccak256(rlp), rlp);
  };
  const accounts: Uint8Array[] = [];
  await trie.walkAllNodes(async (node) => {
    await add(node);
    if (node instanceof LeafMPTNode) accounts.push(node.value() as Uint8Array);
  });
  for (const value of accounts) {
    const [, , storageRoot, codeHash] = RLP.decode(value) as Uint8Array[];
    if (bytesToHex(storageRoot!) !== emptyTrieRoot) {
      const storage = trie.shallowCopy(false);
      storage.root(storageRoot!);
      await storage.walkAllNodes(add);
    }
    const hash = bytesToHex(codeHash!);
    if (hash !== emptyCodeHash && !into.has(hash)) {
      const code = await trie.database().get(codeHash!);
      if (!code) throw new Error(`full-state witness: no code for ${hash}`);
      into.set(hash, code as Uint8Array);
    }
  }
}

/** A geth genesis `alloc` as a state, and the witness of all of it (with its state root). */
export async function genesisWitness(
  alloc: Record<string, { balance?: string; nonce?: string; code?: string; storage?: Record<string, string> }>,
): Promise<{ stateRoot: Hex; witness: Map<Hex, Uint8Array> }> {
  const state = new MerkleStateManager({ prefixCodeHashes: false });
  for (const [key, account] of Object.entries(alloc)) {
    const address = createAddressFromString(`0x${key.replace(/^0x/, '')}`);
    await state.putAccount(address, createAccount({ balance: BigInt(account.balance ?? 0), nonce: BigInt(account.nonce ?? 0) }));
    if (account.code && account.code !== '0x') await state.putCode(address, hexToBytes(account.code as Hex));
    for (const [slot, value] of Object.entries(account.storage ?? {}))
      if (BigInt(value) !== 0n) await state.putStorage(address, hexToBytes(slot as Hex), hexToBytes(value as Hex));
  }
  await state.flush();
  const stateRoot = bytesToHex(await state.getStateRoot());
  const witness = new Map<Hex, Uint8Array>();
  await addStateNodes(state, witness);
  return { stateRoot, witness };
}
