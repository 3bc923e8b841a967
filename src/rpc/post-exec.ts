import { numberToHex } from 'viem';
import type { PendingBlock } from '../view/state.ts';

/**
 * Lagoon's post-exec transaction (0x7d) as JSON-RPC answers it. It has no nonce, chain id, fee
 * fields, recipient or signature; the fields are those of ethereum-optimism/optimism
 * `rust/op-alloy/crates/consensus/src/post_exec.rs` @1c785875 (`serde_post_exec_tx_rpc`: hash,
 * type, gas 0, value 0, input = rlp(payload)) wrapped as `rust/op-alloy/crates/rpc-types/src/transaction.rs`
 * @48ab8b2d wraps every OP transaction (blockHash, blockNumber, transactionIndex, then `from`, the
 * zero address for a transaction without a signer, and `gasPrice`, which op-alloy fills for a
 * transaction whose own gas price is None with the effective price under the block's base fee: 0
 * tip + base fee).
 *
 * UNCONFIRMED against a running op-reth: specs lagoon/post-exec.md @1f2dc033 § Generic Transaction
 * Interface Representation lists `gasPrice` among the omitted fields; op-alloy's wrapper code, read
 * above, writes it. flashlog follows the code (what a node answers) and says so here.
 */
export const zeroAddress = '0x0000000000000000000000000000000000000000';

export interface PostExecPlace {
  readonly blockHash: string | null;
  readonly blockTimestamp: string;
  readonly blockNumber: bigint;
  readonly position: number;
  readonly baseFeePerGas: bigint;
}

/** @example formatPostExecTransaction({ hash, raw: '0x7dc6012ac3c20307' }, place) // { hash, type: '0x7d', gas: '0x0', value: '0x0', input: '0xc6012ac3c20307', … } */
export function formatPostExecTransaction(
  tx: { readonly hash: string; readonly raw: string },
  place: PostExecPlace,
): Record<string, unknown> {
  return {
    hash: tx.hash,
    type: '0x7d',
    gas: '0x0',
    value: '0x0',
    input: `0x${tx.raw.slice(4)}`,
    blockHash: place.blockHash,
    ...(place.blockHash !== null ? { blockTimestamp: numberToHex(BigInt(place.blockTimestamp)) } : {}),
    blockNumber: numberToHex(place.blockNumber),
    transactionIndex: numberToHex(place.position),
    from: zeroAddress,
    gasPrice: numberToHex(place.baseFeePerGas),
  };
}

/** The transactions a pending block serves: its streamed ones, then its post-exec transaction when it has one. */
export function servedTransactions(block: Pick<PendingBlock, 'transactions' | 'postExecTx'>): PendingBlock['transactions'] {
  return block.postExecTx ? [...block.transactions, block.postExecTx] : block.transactions;
}
