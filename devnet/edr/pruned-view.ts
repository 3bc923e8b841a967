import { JsonRpcError, ServerError } from '../../src/errors.ts';
import type { RpcCall } from '../../src/jsonrpc/protocol.ts';
import { BLOCK_NUMBER_AT, isNumber, STATE_TAG_AT } from './sealed-view.ts';

/**
 * The devnet's JSON-RPC over a bounded history (rollover.ts): a block older than the blocks kept
 * is answered as absent (null), as a pruned node answers, and so is a block, transaction or
 * receipt looked up by hash that the devnet does not have.
 *
 * Why here and not in the engine: a forked EDR provider asks its fork source for any block at or
 * below the fork block, and for any hash it does not know; the fork source answers null, but EDR
 * cannot take a null block ("failed to parse ... expected type L1RpcBlock"), so it fails the
 * request where a node answers null.
 */
const LOOKUPS = new Set([
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getBlockReceipts',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleByBlockHashAndIndex',
]);

/** EDR's error when its fork source answered null where it expected an object. */
const nullFromForkSource = (error: unknown): boolean =>
  error instanceof JsonRpcError && /"result":null\}' failed to parse/.test(error.message);

export function prunedView(oldestBlock: () => bigint | undefined, dispatch: (call: RpcCall) => Promise<unknown>) {
  return async (call: RpcCall): Promise<unknown> => {
    const oldest = oldestBlock();
    const older = (at: number | undefined): bigint | undefined => {
      const tag = at === undefined || !Array.isArray(call.params) ? undefined : (call.params[at] as unknown);
      return isNumber(tag) && oldest !== undefined && BigInt(tag) < oldest ? BigInt(tag) : undefined;
    };
    if (older(BLOCK_NUMBER_AT[call.method]) !== undefined) return null;
    const stateAt = older(STATE_TAG_AT[call.method]);
    if (stateAt !== undefined)
      throw new ServerError(`missing trie node: the state at block ${stateAt} is not kept (the devnet keeps blocks ${oldest} to its head)`);
    try {
      return await dispatch(call);
    } catch (error) {
      if (LOOKUPS.has(call.method) && nullFromForkSource(error)) return null;
      throw error;
    }
  };
}
