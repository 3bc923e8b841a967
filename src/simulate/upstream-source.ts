import type { Hex } from 'viem';
import { ServerError } from '../errors.ts';
import type { ForkAccount, ForkSource } from './fork-state.ts';
import type { CallRpc } from '../jsonrpc/protocol.ts';

/** Calls one JSON-RPC method on the node that holds canonical state. */

/**
 * Reads of canonical state at one block, shared by every simulation at that block: an account is
 * three calls (eth_getBalance, eth_getTransactionCount, eth_getCode, made together), a slot is
 * one eth_getStorageAt. Answers are kept in a cache keyed by the block's hash and bounded by its
 * size (contract code counted byte for byte; least recently used entries leave first), so a warm simulation
 * reads nothing from the node, and a reorged block's reads are never reused. A failed read is
 * not kept. Block hashes by number (for BLOCKHASH) are kept per base block, so a reorg below
 * the base gives a new base and new answers.
 */
export interface StateReads {
  at(block: { readonly hash: Hex }, call: CallRpc): ForkSource;
  /** The hash of the canonical block at a height below `base` (BLOCKHASH in a simulation). */
  blockHash(base: Hex, blockNumber: bigint, call: CallRpc): Promise<Hex>;
}

/** What one cache entry costs beyond its key and value: the map's entry, the promise, the answer. */
const ENTRY_BYTES = 320;

/** The bytes an entry holds: its key (2 bytes a character) and contract code at its length. */
function sizeOf(key: string, value: unknown): number {
  const code = (value as ForkAccount | undefined)?.code;
  return ENTRY_BYTES + 2 * key.length + (typeof code === 'string' ? code.length : 0);
}

/** @example createStateReads(64 * 1024 * 1024) */
export function createStateReads(maxBytes = 64 * 1024 * 1024): StateReads {
  const cache = new Map<string, { value: Promise<unknown>; bytes: number }>();
  let bytes = 0;
  const drop = (key: string) => {
    const entry = cache.get(key);
    if (!entry) return;
    cache.delete(key);
    bytes -= entry.bytes;
  };
  /** Least recently used entries leave until the cache fits (the newest always stays). */
  const evict = () => {
    while (bytes > maxBytes && cache.size > 1) drop(cache.keys().next().value!);
  };
  function remember<T>(key: string, read: () => Promise<T>): Promise<T> {
    const held = cache.get(key);
    if (held) {
      // least recently used leaves first: a hit moves the entry to the back
      cache.delete(key);
      cache.set(key, held);
      return held.value as Promise<T>;
    }
    const value = read();
    const entry = { value: value as Promise<unknown>, bytes: sizeOf(key, undefined) };
    cache.set(key, entry);
    bytes += entry.bytes;
    value.then(
      (answer) => {
        if (cache.get(key) !== entry) return;
        const size = sizeOf(key, answer);
        bytes += size - entry.bytes;
        entry.bytes = size;
        evict();
      },
      () => {
        if (cache.get(key) === entry) drop(key);
      },
    );
    evict();
    return value;
  }
  return {
    blockHash: (base, blockNumber, call) =>
      remember(`${base}/hash/${blockNumber}`, async () => {
        const block = (await call('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false])) as { hash?: Hex } | null;
        if (!block?.hash) throw new ServerError(`block ${blockNumber} not found upstream`);
        return block.hash;
      }),
    at({ hash }, call) {
      // By hash (EIP-1898): the reads are of exactly the block the cache key names, even when a
      // reorg replaces the block at that height while the simulation runs.
      const block = { blockHash: hash };
      return {
        account: (address) =>
          remember(`${hash}/${address}`, async (): Promise<ForkAccount | undefined> => {
            const [balance, nonce, code] = await Promise.all([
              call('eth_getBalance', [address, block]),
              call('eth_getTransactionCount', [address, block]),
              call('eth_getCode', [address, block]),
            ]);
            const account = {
              balance: BigInt(balance as string),
              nonce: BigInt(nonce as string),
              code: ((code as string | null) ?? '0x') as Hex,
            };
            return account.balance === 0n && account.nonce === 0n && account.code === '0x' ? undefined : account;
          }),
        storage: (address, slot) =>
          remember(`${hash}/${address}/${slot}`, async () => BigInt((await call('eth_getStorageAt', [address, slot, block])) as string)),
      };
    },
  };
}
