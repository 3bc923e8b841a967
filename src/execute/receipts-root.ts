import { MerklePatriciaTrie } from '@ethereumjs/mpt';
import { bytesToHex, concatHex, hexToBytes, numberToBytes, toRlp, type Hex } from 'viem';
import type { RpcReceipt } from '../records/blocks.ts';

/**
 * The receipts root of a block's receipts, as the OP Stack computes it: a trie keyed by
 * rlp(transaction index) whose values are the EIP-2718 consensus encodings
 *
 *   receipt := rlp([status, cumulativeGasUsed, logsBloom, logs])                  legacy (type 0)
 *            | type || rlp([status, cumulativeGasUsed, logsBloom, logs])          typed (1, 2, 4)
 *            | 0x7e || rlp([status, cumulativeGasUsed, logsBloom, logs, depositNonce, depositReceiptVersion])
 *   log     := [address, [topic, ...], data]
 *
 * where a deposit receipt carries depositNonce from Regolith and depositReceiptVersion from Canyon
 * (OP specs `protocol/deposits.md`, op-alloy `OpDepositReceipt`). Written here because
 * ethereumjs's `encodeReceipt` knows no deposit fields; RLP and the trie come from viem and
 * @ethereumjs/mpt. It lets the `metadata` executor check a feed's receipts against the
 * `receipts_root` the same feed claims.
 */
type ConsensusReceipt = Pick<RpcReceipt, 'status' | 'cumulativeGasUsed' | 'logsBloom' | 'logs' | 'type'> & {
  readonly depositNonce?: string | null | undefined;
  readonly depositReceiptVersion?: string | null | undefined;
};

/** A quantity as RLP wants it: big-endian without leading zeros, zero as the empty string. */
const scalar = (value: string): Hex => (BigInt(value) === 0n ? '0x' : bytesToHex(numberToBytes(BigInt(value))));

export function encodeReceipt(receipt: ConsensusReceipt): Hex {
  const type = Number(BigInt(receipt.type));
  const fields: (Hex | Hex[] | (Hex | Hex[])[][])[] = [
    scalar(receipt.status),
    scalar(receipt.cumulativeGasUsed),
    receipt.logsBloom as Hex,
    receipt.logs.map((log) => [log.address as Hex, log.topics.map((topic) => topic as Hex), log.data as Hex]),
  ];
  if (type === 0x7e) {
    if (receipt.depositNonce != null) fields.push(scalar(receipt.depositNonce));
    if (receipt.depositReceiptVersion != null) fields.push(scalar(receipt.depositReceiptVersion));
  }
  const body = toRlp(fields as never);
  return type === 0 ? body : concatHex([bytesToHex(new Uint8Array([type])), body]);
}

/** The root of the receipts trie of `receipts` (every receipt of the block so far, in order). */
export async function receiptsRoot(receipts: readonly ConsensusReceipt[]): Promise<Hex> {
  const trie = new MerklePatriciaTrie();
  for (const [index, receipt] of receipts.entries()) {
    await trie.put(hexToBytes(toRlp(index === 0 ? '0x' : bytesToHex(numberToBytes(index)))), hexToBytes(encodeReceipt(receipt)));
  }
  return bytesToHex(trie.root());
}
