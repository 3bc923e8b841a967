import type { Hex } from 'viem';
import type { ForkAccount, ForkSource } from './fork-state.ts';

/** Calls one JSON-RPC method on the node that holds canonical state. */
export type RpcCall = (method: string, params: readonly unknown[]) => Promise<unknown>;

/**
 * Reads of canonical state at one block, shared by every simulation at that block: an account is
 * three calls (eth_getBalance, eth_getTransactionCount, eth_getCode, made together), a slot is
 * one eth_getStorageAt. Answers are kept in a bounded cache keyed by the block's hash, so a warm
 * simulation reads nothing from the node, and a reorged block's reads are never reused. A failed
 * read is not kept. Block hashes by number (for BLOCKHASH) are kept too: after a reorg below the
 * base, BLOCKHASH may answer the old hash until the entry ages out (the cache is bounded).
 */
export interface StateReads {
  at(block: { readonly number: bigint; readonly hash: Hex }, call: RpcCall): ForkSource;
  /** The hash of a canonical block (BLOCKHASH in a simulation). */
  blockHash(blockNumber: bigint, call: RpcCall): Promise<Hex>;
}

export function createStateReads(maxEntries = 200_000): StateReads {
  const cache = new Map<string, Promise<unknown>>();
  function remember<T>(key: string, read: () => Promise<T>): Promise<T> {
    const held = cache.get(key);
    if (held) return held as Promise<T>;
    const pending = read();
    cache.set(key, pending);
    pending.catch(() => cache.delete(key));
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
    return pending;
  }
  return {
    blockHash: (blockNumber, call) => remember(`hash/${blockNumber}`, async () => {
      const block = await call('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false]) as { hash?: Hex } | null;
      if (!block?.hash) throw new Error(`block ${blockNumber} not found upstream`);
      return block.hash;
    }),
    at({ number, hash }, call) {
      const block = `0x${number.toString(16)}`;
      return {
        account: (address) => remember(`${hash}/${address}`, async (): Promise<ForkAccount | undefined> => {
          const [balance, nonce, code] = await Promise.all([
            call('eth_getBalance', [address, block]),
            call('eth_getTransactionCount', [address, block]),
            call('eth_getCode', [address, block]),
          ]);
          const account = { balance: BigInt(balance as string), nonce: BigInt(nonce as string), code: ((code as string | null) ?? '0x') as Hex };
          return account.balance === 0n && account.nonce === 0n && account.code === '0x' ? undefined : account;
        }),
        storage: (address, slot) => remember(`${hash}/${address}/${slot}`, async () => BigInt((await call('eth_getStorageAt', [address, slot, block])) as string)),
      };
    },
  };
}
