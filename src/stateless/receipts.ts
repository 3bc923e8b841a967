import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { RLP } from '@ethereumjs/rlp';
import { MapDB, ValueEncoding } from '@ethereumjs/util';
import { bytesToHex, concat, hexToBytes, numberToHex, toRlp, type Hex } from 'viem';

/** A log as the receipt holds it. */
export interface ReceiptLog {
  readonly address: Hex;
  readonly topics: readonly Hex[];
  readonly data: Hex;
}

/**
 * A consensus receipt (EIP-2718). Deposit receipts (type 0x7e) carry the sender's nonce before
 * the deposit (Regolith) and a receipt version, 1 since Canyon (OP Stack deposits.md).
 */
export interface Receipt {
  readonly type: number;
  readonly status: 0 | 1;
  readonly cumulativeGasUsed: bigint;
  readonly gasUsed: bigint;
  readonly logsBloom: Hex;
  readonly logs: readonly ReceiptLog[];
  readonly depositNonce?: bigint | undefined;
  readonly depositReceiptVersion?: bigint | undefined;
  /** What the sender paid beyond gas (zero for deposits). */
  readonly l1Fee: bigint;
  readonly operatorFee: bigint;
}

const quantity = (value: bigint): Hex => (value === 0n ? '0x' : numberToHex(value));

/** type ‖ rlp([status, cumulativeGasUsed, logsBloom, logs, depositNonce?, depositReceiptVersion?]), no type byte for legacy. */
export function encodeReceipt(receipt: Receipt): Hex {
  const body: (Hex | Hex[] | (Hex | Hex[])[][])[] = [
    receipt.status === 1 ? '0x01' : '0x',
    quantity(receipt.cumulativeGasUsed),
    receipt.logsBloom,
    receipt.logs.map((log) => [log.address, [...log.topics], log.data]),
  ];
  if (receipt.depositNonce !== undefined) body.push(quantity(receipt.depositNonce));
  if (receipt.depositReceiptVersion !== undefined) body.push(quantity(receipt.depositReceiptVersion));
  const rlp = toRlp(body as never);
  return receipt.type === 0 ? rlp : concat([numberToHex(receipt.type, { size: 1 }), rlp]);
}

/** The root of the trie keyed by rlp(index) (transactions, receipts). */
export async function orderedTrieRoot(values: readonly Hex[]): Promise<Hex> {
  const trie = new MerklePatriciaTrie();
  for (const [index, value] of values.entries()) await trie.put(RLP.encode(index), hexToBytes(value));
  return bytesToHex(trie.root());
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
