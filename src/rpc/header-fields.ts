import { bytesToHex, fromRlp, hexToBytes, hexToNumber, keccak256, numberToHex, sha256, size, slice, toRlp, type Hex } from 'viem';
import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { encodeHeader, headerHash, type BlockHeader } from '../op/header.ts';
import { orderedTrieRoot } from '../evm/receipts.ts';
import type { PendingBlock } from '../view/state.ts';

/**
 * The header fields of a pending block that the feed does not carry and the gateway rebuilds
 * (transactions root, requests hash, size), and go-ethereum's block size: the part of the wire
 * format that needs tries and RLP, beside format.ts.
 */

/** Keccak of the empty uncle list: pending blocks have no uncles. */
export const emptyUnclesHash: Hex = keccak256(toRlp([]));

/**
 * The transactions root of each flashblocks block, grown flashblock by flashblock: a block's
 * transactions only ever grow within its payload, so each step puts only the new ones into the
 * trie it kept (keys rlp(index), @ethereumjs/mpt). Rebuilding the whole trie at every step cost
 * ~1 ms a transaction on a loaded 2-core machine, 380 ms for a 400-transaction block, per
 * flashblock. A block seen with another payload, or with fewer or other transactions than the
 * trie holds, starts a new trie.
 */
export function createGrowingRoots() {
  interface Growing {
    readonly payloadId: string;
    readonly trie: MerklePatriciaTrie;
    /** Hash of the last transaction put, and how many were put. */
    lastHash: string | undefined;
    count: number;
    /** Puts run one after another. */
    queue: Promise<unknown>;
  }
  const byNumber = new Map<bigint, Growing>();
  return {
    rootOf(block: PendingBlock): Promise<Hex> {
      const txs = block.transactions;
      let growing = byNumber.get(block.number);
      const fits = (g: Growing): boolean =>
        g.payloadId === block.payloadId && g.count <= txs.length && (g.count === 0 || txs[g.count - 1]!.hash === g.lastHash);
      if (!growing || !fits(growing)) {
        growing = { payloadId: block.payloadId, trie: new MerklePatriciaTrie(), lastHash: undefined, count: 0, queue: Promise.resolve() };
        byNumber.set(block.number, growing);
      }
      const g = growing;
      const root = g.queue.then(async () => {
        // Another step of the same block may have grown the trie past this one meanwhile.
        if (!fits(g)) return orderedTrieRoot(txs.map((tx) => tx.raw));
        for (let i = g.count; i < txs.length; i++) await g.trie.put(RLP.encode(i), hexToBytes(txs[i]!.raw));
        g.count = txs.length;
        g.lastHash = txs.at(-1)?.hash;
        return bytesToHex(g.trie.root());
      });
      g.queue = root.catch(() => undefined);
      return root;
    },
    dropBelow(number: bigint): void {
      for (const held of byNumber.keys()) if (held < number) byNumber.delete(held);
    },
  };
}

/** A withdrawal as JSON-RPC gives it (hex quantities). */
export interface RpcWithdrawal {
  readonly index: string;
  readonly validatorIndex: string;
  readonly address: string;
  readonly amount: string;
}

/**
 * A block's `size` as go-ethereum's `Block.Size()` counts it: the RLP length of
 * `[header, transactions, uncles, withdrawals]` (no uncles on OP chains), where a typed
 * transaction is a byte string holding its EIP-2718 encoding (so its string header counts) and a
 * legacy one its RLP list.
 *
 * @example blockSize(headerFromRpc(block), raws, block.withdrawals) // '0x2347'
 */
export function blockSize(header: BlockHeader, raws: readonly Hex[], withdrawals: readonly RpcWithdrawal[]): Hex {
  const body = [
    fromRlp(encodeHeader(header)),
    raws.map((raw) => (hexToNumber(slice(raw, 0, 1)) >= 0xc0 ? fromRlp(raw) : raw)),
    [],
    withdrawals.map((w) => [w.index, w.validatorIndex, w.address, w.amount].map((q) => (BigInt(q) === 0n ? '0x' : numberToHex(BigInt(q))))),
  ];
  return numberToHex(size(toRlp(body as never)));
}

/** sha256 of no requests: the EIP-7685 `requestsHash` of every OP Stack block since Isthmus. */
const emptyRequestsHash: Hex = sha256('0x');

/** The header fields a pending block answers with that are not in the record of a flashblocks block. */
export interface RebuiltHeaderFields {
  readonly transactionsRoot: Hex;
  readonly size: Hex;
  /** Present when the block is an Isthmus+ block, by the rules below. */
  readonly requestsHash?: Hex;
  /** The rebuilt header hashes to the builder's hash: every field, and so `size`, is the block's. */
  readonly exact: boolean;
}

/**
 * A zero hash in a feed's `state_root`, `block_hash` or `withdrawals_root` is "not given", never a
 * value: OP's Subblocks zero all three (and `withdrawals`) in every frame (ethereum-optimism/specs
 * `specs/protocol/subblocks.md` @43a681ec, "Zero-valued fields": consumers MUST treat them as
 * unavailable), and Base's builder sent a zero state root between its first and last flashblock.
 */
export const isNotGiven = (hash: string): boolean => /^0x0{64}$/.test(hash);

/**
 * A flashblocks block's missing header fields, rebuilt from what the record holds:
 * - `transactionsRoot`: the ordered trie (keys rlp(index)) of the raw transactions, by
 *   @ethereumjs/mpt (src/evm/op/receipts.ts), as the node computes it when it seals the block;
 * - `requestsHash`: the empty-requests hash on an Isthmus+ block. When the flashblock gives the
 *   builder's hash of the block so far (`block_hash`), the header with it or without it that
 *   hashes to that hash says which; when neither does, or the hash is not given (a subblocks
 *   feed zeroes it), the chain's rule decides: `isthmus` (the chain's fork schedule, when the
 *   caller knows it), else whether the block is at or above `requestsFrom` (the lowest block seen
 *   exact with it, kept by the formatter);
 * - `size`: the RLP length of `[header, transactions, [], withdrawals]`. It is exact when the
 *   rebuilt header hashes to the builder's hash; when it does not (a zero state root between
 *   flashblocks, a subblock's zeroed roots), each field still has the width the sealed header
 *   gives it, so `size` is the sealed block's once the transactions are and the fork is known.
 */
export async function rebuildHeaderFields(
  block: PendingBlock,
  root?: Hex,
  requestsFrom?: bigint,
  isthmusByRule?: boolean,
): Promise<RebuiltHeaderFields> {
  const header = block.header;
  const transactionsRoot = root ?? (await orderedTrieRoot(block.transactions.map((tx) => tx.raw)));
  const base: BlockHeader = {
    parentHash: header.parentHash as Hex,
    sha3Uncles: emptyUnclesHash,
    miner: header.miner as Hex,
    stateRoot: header.stateRoot as Hex,
    transactionsRoot,
    receiptsRoot: header.receiptsRoot as Hex,
    logsBloom: header.logsBloom as Hex,
    difficulty: 0n,
    number: BigInt(header.number),
    gasLimit: BigInt(header.gasLimit),
    gasUsed: BigInt(header.gasUsed),
    timestamp: BigInt(header.timestamp),
    extraData: header.extraData as Hex,
    mixHash: header.prevRandao as Hex,
    nonce: '0x0000000000000000',
    baseFeePerGas: BigInt(header.baseFeePerGas),
    withdrawalsRoot: header.withdrawalsRoot as Hex,
    blobGasUsed: BigInt(header.blobGasUsed ?? 0),
    excessBlobGas: BigInt(header.excessBlobGas ?? 0),
    parentBeaconBlockRoot: header.parentBeaconBlockRoot as Hex,
  };
  const withRequests: BlockHeader = { ...base, requestsHash: emptyRequestsHash };
  // A hash not given is never hashed against: the rebuild then depends on the chain's rule only.
  const builderHash = isNotGiven(header.flashblockHash) ? undefined : header.flashblockHash.toLowerCase();
  const matchesWith = builderHash !== undefined && headerHash(withRequests) === builderHash;
  const exact = matchesWith || (builderHash !== undefined && headerHash(base) === builderHash);
  // Not reproducible: the chain's rule (forks only ever switch on).
  const isthmus = exact ? matchesWith : (isthmusByRule ?? (requestsFrom !== undefined && base.number >= requestsFrom));
  const rebuilt = isthmus ? withRequests : base;
  return {
    transactionsRoot,
    size: blockSize(
      rebuilt,
      block.transactions.map((tx) => tx.raw as Hex),
      header.withdrawals,
    ),
    ...(isthmus ? { requestsHash: emptyRequestsHash } : {}),
    exact,
  };
}
