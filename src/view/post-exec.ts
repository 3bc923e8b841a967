import { numberToHex } from 'viem';
import { decodePostExecTx, type PostExecPayload } from '../op/post-exec.ts';
import type { RpcReceipt } from '../records/blocks.ts';

/**
 * Lagoon in the view: a pending block's post-exec transaction (the latest subblock's
 * `diff.post_exec_tx`, src/chain/assemble.ts) and the `opGasRefund` it gives the receipts of the
 * transactions it names (specs lagoon/sdm.md § Receipt Extension: a quantity on a refunded
 * transaction's receipt, sourced from the payload's entry for its index). The feed streams no
 * receipt for the post-exec transaction itself (post-exec.md § Subblocks, "No receipt is streamed"),
 * so the view holds none for it: its pending receipt is null until the block is sealed.
 */
export type PendingPostExecTx = { readonly hash: `0x${string}`; readonly raw: `0x${string}` };

/** The payload of a post-exec transaction, or undefined when there is none or it does not decode (then no receipt gets a refund). */
export function postExecPayloadOf(tx: PendingPostExecTx | null | undefined): PostExecPayload | undefined {
  if (!tx) return undefined;
  try {
    return decodePostExecTx(tx.raw);
  } catch {
    return undefined;
  }
}

/**
 * The receipts with `opGasRefund` as `postExecTx` gives it: set on the receipts its entries name,
 * removed from the others (an earlier subblock's provisional entry is not kept). `hadPostExec`: the
 * block held before this step had one (its refunds may need removing). Unchanged (the same array)
 * when neither step has a post-exec transaction, so a blocks source's node receipts keep theirs.
 */
export function withOpGasRefunds(
  receipts: readonly RpcReceipt[],
  postExecTx: PendingPostExecTx | null | undefined,
  hadPostExec: boolean,
): readonly RpcReceipt[] {
  if (!postExecTx && !hadPostExec) return receipts;
  const refunds = new Map((postExecPayloadOf(postExecTx)?.gasRefundEntries ?? []).map((entry) => [entry.index, entry.gasRefund]));
  return receipts.map((receipt) => {
    const refund = refunds.get(Number(receipt.transactionIndex));
    if (refund !== undefined) return { ...receipt, opGasRefund: numberToHex(refund) };
    if (receipt.opGasRefund === undefined) return receipt;
    const { opGasRefund: _dropped, ...rest } = receipt;
    return rest as RpcReceipt;
  });
}
