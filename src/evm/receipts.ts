import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { MapDB, ValueEncoding } from '@ethereumjs/util';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concat, hexToBytes, numberToHex, toRlp, type Hex } from 'viem';

/**
 * The one receipt encoder: a block's consensus receipts, their trie root and their blooms, as the
 * OP Stack computes them. The stateless executor, the metadata executor (a feed's `receipts_root`),
 * the devnet's blocks and the RPC's header fields all use it.
 *
 *   receipt := rlp([status, cumulativeGasUsed, logsBloom, logs])                  legacy (type 0)
 *            | type || rlp([status, cumulativeGasUsed, logsBloom, logs])          typed (1, 2, 4)
 *            | 0x7e || rlp([status, cumulativeGasUsed, logsBloom, logs, depositNonce, depositReceiptVersion])
 *   log     := [address, [topic, ...], data]
 *
 * A deposit receipt carries depositNonce from Regolith and depositReceiptVersion (1) from Canyon
 * (OP specs `protocol/deposits.md`). Written here because ethereumjs's receipt encoder knows no
 * deposit fields; RLP and the tries come from viem, @ethereumjs/rlp and @ethereumjs/mpt.
 */

/** A log as the receipt holds it. */
export interface ReceiptLog {
  readonly address: Hex;
  readonly topics: readonly Hex[];
  readonly data: Hex;
}

/** A consensus receipt (EIP-2718), the fields its encoding holds. */
export interface ConsensusReceipt {
  readonly type: number;
  readonly status: 0 | 1;
  readonly cumulativeGasUsed: bigint;
  readonly logsBloom: Hex;
  readonly logs: readonly ReceiptLog[];
  readonly depositNonce?: bigint | undefined;
  readonly depositReceiptVersion?: bigint | undefined;
}

/** A receipt as JSON-RPC and the log's records carry it (hex quantities). */
export interface RpcConsensusReceipt {
  readonly type: string;
  readonly status: string;
  readonly cumulativeGasUsed: string;
  readonly logsBloom: string;
  readonly logs: readonly { readonly address: string; readonly topics: readonly string[]; readonly data: string }[];
  readonly depositNonce?: string | null | undefined;
  readonly depositReceiptVersion?: string | null | undefined;
}

const quantity = (value: bigint): Hex => (value === 0n ? '0x' : numberToHex(value));

/** type ‖ rlp([status, cumulativeGasUsed, logsBloom, logs, depositNonce?, depositReceiptVersion?]), no type byte for legacy. */
export function encodeReceipt(receipt: ConsensusReceipt): Hex {
  const body: (Hex | Hex[] | (Hex | Hex[])[][])[] = [
    receipt.status === 1 ? '0x01' : '0x',
    quantity(receipt.cumulativeGasUsed),
    receipt.logsBloom,
    receipt.logs.map((log) => [log.address, [...log.topics], log.data]),
  ];
  if (receipt.type === 0x7e) {
    if (receipt.depositNonce !== undefined) body.push(quantity(receipt.depositNonce));
    if (receipt.depositReceiptVersion !== undefined) body.push(quantity(receipt.depositReceiptVersion));
  }
  const rlp = toRlp(body as never);
  return receipt.type === 0 ? rlp : concat([numberToHex(receipt.type, { size: 1 }), rlp]);
}

/** An RPC receipt's consensus fields. */
export function fromRpcReceipt(receipt: RpcConsensusReceipt): ConsensusReceipt {
  const optional = (value: string | null | undefined) => (value === null || value === undefined ? undefined : BigInt(value));
  return {
    type: Number(BigInt(receipt.type)),
    status: BigInt(receipt.status) === 1n ? 1 : 0,
    cumulativeGasUsed: BigInt(receipt.cumulativeGasUsed),
    logsBloom: receipt.logsBloom as Hex,
    logs: receipt.logs.map((log) => ({ address: log.address as Hex, topics: log.topics as Hex[], data: log.data as Hex })),
    depositNonce: optional(receipt.depositNonce),
    depositReceiptVersion: optional(receipt.depositReceiptVersion),
  };
}

/** The root of the receipts trie of `receipts` (every receipt of the block so far, in order). */
export function receiptsRoot(receipts: readonly ConsensusReceipt[]): Promise<Hex> {
  return orderedTrieRoot(receipts.map(encodeReceipt));
}

/**
 * The root of the trie keyed by rlp(index) (transactions, receipts). `keccak256`: the trie's hash
 * (the stateless executor's faster one, crypto.ts), @noble/hashes' when absent.
 */
export async function orderedTrieRoot(values: readonly Hex[], keccak256?: (data: Uint8Array) => Uint8Array): Promise<Hex> {
  const trie = new MerklePatriciaTrie(keccak256 ? { useKeyHashingFunction: keccak256 } : {});
  for (const [index, value] of values.entries()) await trie.put(RLP.encode(index), hexToBytes(value));
  return bytesToHex(trie.root());
}

/**
 * Every node of the trie keyed by rlp(index) over `values`, as keccak preimages (what a prover
 * hands over so the transactions can be read back from a header's transactionsRoot).
 */
export async function orderedTrieNodes(values: readonly Hex[]): Promise<Hex[]> {
  const db = new MapDB<string, Uint8Array>();
  const trie = new MerklePatriciaTrie({ db, valueEncoding: ValueEncoding.Bytes });
  for (const [index, value] of values.entries()) await trie.put(RLP.encode(index), hexToBytes(value));
  const nodes: Hex[] = [];
  for (const value of (db as unknown as { _database: Map<string, Uint8Array> })._database.values()) nodes.push(bytesToHex(value));
  return nodes;
}

/** OR of 256-byte blooms. */
export function orBlooms(blooms: readonly Hex[]): Hex {
  const out = new Uint8Array(256);
  for (const bloom of blooms) {
    const bytes = hexToBytes(bloom);
    for (let i = 0; i < 256; i++) out[i]! |= bytes[i]!;
  }
  return bytesToHex(out);
}

/**
 * The 2048-bit logs bloom of the Yellow Paper (section 4.3.1): for the address and each topic of
 * each log, three bits, each the low 11 bits of a byte pair of keccak256 of the item. Written by
 * hand because viem ships no bloom builder; it is eight lines.
 */
export function logsBloom(logs: readonly { readonly address: string; readonly topics: readonly string[] }[]): Hex {
  const bloom = new Uint8Array(256);
  const add = (hex: string) => {
    const hash = keccak_256(hexToBytes(hex as Hex));
    for (let i = 0; i < 6; i += 2) {
      const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
      bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
    }
  };
  for (const log of logs) {
    add(log.address);
    for (const topic of log.topics) add(topic);
  }
  return bytesToHex(bloom);
}
