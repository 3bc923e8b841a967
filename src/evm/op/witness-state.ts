/**
 * Stateless execution: running an OP Stack block from its parent's state root and a witness (the
 * hash-keyed preimages of every trie node and contract code the block reads), with no node and
 * no database. One engine for the enclave (proving by re-execution), `flashlog execute-block` and
 * the tests against real OP blocks: a block whose rebuilt header hashes to the chain's block hash
 * was executed exactly as the chain executed it.
 *
 * This file is the state: ethereumjs's MerkleStateManager over an @ethereumjs/mpt trie whose
 * database is the witness. A node or code the witness lacks is an error naming its hash, never an
 * empty value (the trie library reads a node missing from its database as "absent", so the
 * database throws its own error before the library can swallow one).
 */
import type { Common } from '@ethereumjs/common';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager';
import {
  Account,
  EthereumJSErrorWithoutCode,
  ValueEncoding,
  createAccountFromRLP,
  equalsBytes,
  bytesToHex as ejsBytesToHex,
  createAddressFromString,
  type Address,
  type BatchDBOp,
  type DB,
} from '@ethereumjs/util';
import { bytesToHex, hexToBytes, keccak256, type Hex } from 'viem';
import { FlashlogError } from '../../errors.ts';

/** keccak256(rlp("")): the root of an empty trie. */
export const emptyTrieRoot: Hex = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/** The witness lacks a trie node or a contract code the execution needs. */
export class WitnessIncompleteError extends FlashlogError {
  readonly key: Hex;
  /** What was being read (an account, a slot, a code, a transaction). */
  readonly context: string | undefined;
  constructor(key: Hex, context?: string) {
    super('WITNESS_INCOMPLETE', `witness incomplete: no preimage for ${key}${context ? ` (${context})` : ''}`);
    this.name = 'WitnessIncompleteError';
    this.key = key;
    this.context = context;
  }
}

/** Preimages by their keccak256 hash (lowercase 0x-hex). */
export type Witness = ReadonlyMap<Hex, Uint8Array>;

/**
 * Indexes preimages by hash, checking each one hashes to its key.
 *
 * @example witnessFromRecord(fixture.preimages)
 */
export function witnessFromRecord(record: Readonly<Record<string, string>>): Map<Hex, Uint8Array> {
  const witness = new Map<Hex, Uint8Array>();
  for (const [key, value] of Object.entries(record)) {
    const hash = keccak256(value as Hex);
    if (hash !== key.toLowerCase()) throw new FlashlogError('WITNESS_INVALID', `witness: preimage of ${key} hashes to ${hash}`);
    witness.set(hash, hexToBytes(value as Hex));
  }
  return witness;
}

/**
 * An ethereumjs key/value database that reads the witness and keeps what the execution writes
 * (new trie nodes, new code) beside it. Keys arrive as unprefixed hex (KeyEncoding.String).
 */
function witnessDb(witness: Witness, written = new Map<string, Uint8Array>()): DB<string, Uint8Array> {
  const keyOf = (key: string | Uint8Array): string => (typeof key === 'string' ? key : ejsBytesToHex(key).slice(2)).toLowerCase();
  return {
    async get(key) {
      const k = keyOf(key);
      // The empty trie has no node (a proof may still carry its RLP, 0x80): answer as the library
      // does for an absent node, which it reads as "empty".
      if (`0x${k}` === emptyTrieRoot) throw EthereumJSErrorWithoutCode('Missing node in DB');
      const value = written.get(k) ?? witness.get(`0x${k}`);
      if (value === undefined) throw new WitnessIncompleteError(`0x${k}`);
      return value;
    },
    async put(key, value) {
      written.set(keyOf(key), value);
    },
    async del() {
      /* nodes are kept: the witness is append-only during one block */
    },
    async batch(ops: BatchDBOp<string, Uint8Array>[]) {
      for (const op of ops) if (op.type === 'put') written.set(keyOf(op.key), op.value);
    },
    shallowCopy() {
      return witnessDb(witness, written);
    },
    async open() {},
  };
}

/** Adds what was being read to a missing-preimage error. */
async function naming<T>(what: () => string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof WitnessIncompleteError) throw new WitnessIncompleteError(error.key, what());
    throw error;
  }
}

/**
 * A MerkleStateManager whose trie starts at `stateRoot` and reads nodes and code from the witness.
 * Code is keyed by its bare hash (no ethereumjs prefix), as in an execution witness. With `common`,
 * the tries and the state hash with its `customCrypto.keccak256` (see crypto.ts). `reference`: as
 * before the flush wrote only what changed and decoded accounts were kept (for comparison).
 *
 * @example const state = createWitnessState(witness, parent.stateRoot, common)
 */
export function createWitnessState(witness: Witness, stateRoot: Hex, common?: Common, reference = false): MerkleStateManager {
  const trie = new MerklePatriciaTrie({
    db: witnessDb(witness),
    root: hexToBytes(stateRoot),
    useKeyHashing: true,
    valueEncoding: ValueEncoding.Bytes,
    ...(common ? { common } : {}),
  });
  const state = new MerkleStateManager({ trie, prefixCodeHashes: false, caches: new Caches(), ...(common ? { common } : {}) });
  const host = state as unknown as CacheHost;
  const parent: ParentValues = { accounts: new Map(), slots: new Map(), cleared: new Set(), code: new Set() };
  const getAccount = state.getAccount.bind(state);
  const getStorage = state.getStorage.bind(state);
  const getCode = state.getCode.bind(state);
  // ethereumjs decodes the cached RLP on every read; the EVM reads the same accounts many times.
  const decoded = new WeakMap<Uint8Array, Account>();
  state.getAccount = async (address: Address) => {
    const cached = reference ? undefined : host._caches.account!.get(address);
    if (cached !== undefined) {
      const rlp = cached.accountRLP;
      if (rlp === undefined) return undefined;
      let account = decoded.get(rlp);
      if (!account) decoded.set(rlp, (account = createAccountFromRLP(rlp)));
      return new Account(account.nonce, account.balance, account.storageRoot, account.codeHash);
    }
    const account = await naming(
      () => `account ${address.toString()}`,
      () => getAccount(address),
    );
    const key = ejsBytesToHex(address.bytes).slice(2);
    if (!parent.accounts.has(key)) parent.accounts.set(key, host._caches.account!.get(address)?.accountRLP);
    return account;
  };
  // A written account is read back soon (the next call, the fee credits): keep its decoded form.
  const putAccount = state.putAccount.bind(state);
  state.putAccount = async (address: Address, account: Account | undefined) => {
    await putAccount(address, account);
    const rlp = reference || account === undefined ? undefined : host._caches.account!.get(address)?.accountRLP;
    if (rlp) decoded.set(rlp, new Account(account!.nonce, account!.balance, account!.storageRoot, account!.codeHash));
  };
  state.getStorage = async (address: Address, slot: Uint8Array) => {
    const cached = reference || slot.length !== 32 ? undefined : host._caches.storage!.get(address, slot);
    // What the library returns for a cached slot, without looking it up twice.
    if (cached !== undefined) return RLP.decode(cached) as Uint8Array;
    const fromTrie = host._caches.storage!.get(address, slot) === undefined;
    const value = await naming(
      () => `storage ${address.toString()} slot ${bytesToHex(slot)}`,
      () => getStorage(address, slot),
    );
    const key = ejsBytesToHex(address.bytes).slice(2) + ejsBytesToHex(slot).slice(2);
    if (fromTrie && !parent.slots.has(key)) parent.slots.set(key, value);
    return value;
  };
  const clearStorage = state.clearStorage.bind(state);
  state.clearStorage = async (address: Address) => {
    parent.cleared.add(ejsBytesToHex(address.bytes).slice(2));
    await clearStorage(address);
  };
  const putCode = state.putCode.bind(state);
  state.putCode = async (address: Address, code: Uint8Array) => {
    parent.code.add(ejsBytesToHex(address.bytes).slice(2));
    await putCode(address, code);
  };
  state.getCode = (address: Address) =>
    naming(
      () => `code of ${address.toString()}`,
      () => getCode(address),
    );
  guardStorageWrites(state);
  deferStorageWrites(state);
  const flush = orderedFlush(state, reference ? undefined : parent);
  state.flush = async () => {};
  state.getStateRoot = () =>
    naming(
      () => 'updating the state trie',
      async () => {
        await flush();
        return trie.root();
      },
    );
  return state;
}

type StorageTrieHost = {
  _getStorageTrie(address: Address, account: unknown): MerklePatriciaTrie;
  _storageTries: Record<string, MerklePatriciaTrie>;
  _modifyContractStorage(
    address: Address,
    account: { storageRoot: Uint8Array },
    modify: (trie: MerklePatriciaTrie, done: () => Promise<void>) => Promise<void>,
  ): Promise<void>;
};

/**
 * ethereumjs 10.1.3 writes storage inside `new Promise(async (resolve) => ...)`: a trie error there
 * (a node the witness lacks) is an unhandled rejection that ends the process and leaves the write
 * pending forever. This replacement of that private step does the same work and lets the error
 * reach the caller, naming the account.
 */
function guardStorageWrites(state: MerkleStateManager): void {
  const host = state as unknown as StorageTrieHost;
  host._modifyContractStorage = async (address, account, modify) => {
    const trie = host._getStorageTrie(address, account);
    let finishing: Promise<void> | undefined;
    await naming(
      () => `writing storage of ${address.toString()}`,
      () =>
        modify(
          trie,
          () =>
            (finishing = (async () => {
              host._storageTries[bytesToHex(address.bytes).slice(2)] = trie;
              account.storageRoot = trie.root();
              await state.putAccount(address, account as never);
            })()),
        ),
    );
    await finishing;
  };
}

/**
 * ethereumjs 10.1.3's putStorage writes the storage cache and then, because the cache's `put`
 * returns nothing, the trie too (`cache.put(...) ?? write(...)`). Here a write goes to the cache
 * only, for the ordered flush below.
 */
function deferStorageWrites(state: MerkleStateManager): void {
  const host = state as unknown as CacheHost;
  state.putStorage = async (address, key, value) => {
    if (key.length !== 32) throw new FlashlogError('STATE_INVALID', 'storage key must be 32 bytes');
    if (value.length > 32) throw new FlashlogError('STATE_INVALID', 'storage value longer than 32 bytes');
    if (!(await state.getAccount(address)))
      throw new FlashlogError('STATE_INVALID', `storage write to absent account ${address.toString()}`);
    const first = value.findIndex((byte) => byte !== 0);
    host._caches.storage!.put(address, key, RLP.encode(first < 0 ? new Uint8Array(0) : value.slice(first)));
  };
}

type CacheHost = StorageTrieHost & {
  _caches: Caches;
  _writeContractStorage(address: Address, account: unknown, key: Uint8Array, value: Uint8Array): Promise<void>;
  _getCodeDB(): DB<Uint8Array, Uint8Array>;
  keccakFunction(message: Uint8Array): Uint8Array;
};

/**
 * What the block read from the parent state (first reads that reached the trie), so the flush
 * writes only what changed: ethereumjs's caches hand back every account, slot and code read, and
 * writing an unchanged leaf still re-hashes its path. `cleared`: accounts whose storage was wiped,
 * whose slots are always written; `code`: accounts given code.
 */
interface ParentValues {
  readonly accounts: Map<string, Uint8Array | undefined>;
  readonly slots: Map<string, Uint8Array>;
  readonly cleared: Set<string>;
  readonly code: Set<string>;
}

/**
 * The trie is written once, when the state root is asked for, with the block's final values, and
 * in geth's order: code, then storage writes before storage deletions, then account writes before
 * account deletions. The witness holds the nodes that order needs; writing each transaction's
 * changes as ethereumjs does by default (a slot set then cleared, a deletion collapsing a branch
 * before its sibling is written) reads nodes a witness does not carry.
 */
function orderedFlush(state: MerkleStateManager, parent: ParentValues | undefined): () => Promise<void> {
  const host = state as unknown as CacheHost;
  const unchanged = (before: Uint8Array | undefined, after: Uint8Array | undefined) =>
    before === undefined || after === undefined ? before === after : equalsBytes(before, after);
  return async () => {
    for (const [addressHex, { code }] of host._caches.code?.flush() ?? []) {
      if (code === undefined || (parent && !parent.code.has(addressHex))) continue;
      const address = createAddressFromString(`0x${addressHex}`);
      const codeHash = host.keccakFunction(code);
      await host._getCodeDB().put(codeHash, code);
      await state.modifyAccountFields(address, { codeHash });
    }
    const storage = host._caches.storage?.flush() ?? [];
    const isDeletion = (value: Uint8Array | undefined) => RLP.decode(value ?? new Uint8Array(0)).length === 0;
    for (const deletions of [false, true]) {
      for (const [addressHex, keyHex, value] of storage) {
        if (isDeletion(value) !== deletions) continue;
        const before = !parent || parent.cleared.has(addressHex) ? undefined : parent.slots.get(addressHex + keyHex);
        if (before !== undefined && equalsBytes(before, RLP.decode(value ?? new Uint8Array(0)) as Uint8Array)) continue;
        const address = createAddressFromString(`0x${addressHex}`);
        const account = await state.getAccount(address);
        if (account)
          await host._writeContractStorage(
            address,
            account,
            hexToBytes(`0x${keyHex}`),
            RLP.decode(value ?? new Uint8Array(0)) as Uint8Array,
          );
      }
    }
    const accounts = host._caches.account?.flush() ?? [];
    for (const deletions of [false, true]) {
      for (const [addressHex, { accountRLP }] of accounts) {
        if ((accountRLP === undefined) !== deletions) continue;
        if (parent?.accounts.has(addressHex) && unchanged(parent.accounts.get(addressHex), accountRLP)) continue;
        const key = hexToBytes(`0x${addressHex}`);
        await (accountRLP === undefined ? state['_trie'].del(key) : state['_trie'].put(key, accountRLP));
      }
    }
  };
}

/**
 * The values of the trie keyed by rlp(index) under `root` (a block's transactions), read through
 * the witness; a node it lacks is a {@link WitnessIncompleteError}.
 */
export async function readOrderedTrie(witness: Witness, root: Hex, what: string): Promise<Hex[]> {
  const trie = new MerklePatriciaTrie({ db: witnessDb(witness), root: hexToBytes(root), valueEncoding: ValueEncoding.Bytes });
  const values: Hex[] = [];
  for (let index = 0; ; index++) {
    const value = await naming(
      () => `${what} ${index}`,
      () => trie.get(RLP.encode(index)),
    );
    if (value === null) return values;
    values.push(bytesToHex(value));
  }
}
