import { numberToHex } from 'viem';
import { ServerError } from '../../src/errors.ts';

/**
 * The devnet's JSON-RPC answers as of its sealed head.
 *
 * Between two flashblocks the devnet's EVM holds the block being built as trial blocks on top of
 * the sealed head (devnet/edr/block-building.ts: each transaction is executed once there, not once
 * per flashblock). No reader may see them: `latest` (and `safe`, `finalized`, or no tag) is
 * rewritten to the sealed head's number, a block, receipt or log beyond it is answered as absent,
 * and a pre-confirmed transaction as pending (no block). `pending` state (a balance, a nonce, a
 * call) is the pre-confirmed state plus the mempool, as on a flashblocks-aware node.
 */
/** Where each method that reads state at a block takes its block tag (pruned-view.ts reads it too). */
export const STATE_TAG_AT: Readonly<Record<string, number>> = {
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getStorageAt: 2,
  eth_getTransactionCount: 1,
  eth_call: 1,
  eth_estimateGas: 1,
  eth_getProof: 2,
  eth_createAccessList: 1,
  debug_traceCall: 1,
};
/** Where each method that reads a block by its number takes the number (pruned-view.ts reads it too). */
export const BLOCK_NUMBER_AT: Readonly<Record<string, number>> = {
  eth_getBlockByNumber: 0,
  eth_getBlockTransactionCountByNumber: 0,
  eth_getTransactionByBlockNumberAndIndex: 0,
  eth_getUncleCountByBlockNumber: 0,
  eth_getUncleByBlockNumberAndIndex: 0,
  eth_getBlockReceipts: 0,
};
const BLOCK_TAG_AT: Readonly<Record<string, number>> = { ...BLOCK_NUMBER_AT, eth_feeHistory: 1 };
const SEALED_TAGS = new Set(['latest', 'safe', 'finalized']);
/** A block number in hex (at most 64 bits), as against a tag. */
export const isNumber = (value: unknown): value is `0x${string}` => typeof value === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(value);

/** What a call becomes: new params, or an answer without asking the engine. */
export type SealedCall = { readonly params: unknown[] } | { readonly answer: unknown };

export function atSealedHead(head: bigint, method: string, params: readonly unknown[]): SealedCall {
  const sealed = numberToHex(head);
  if (method === 'eth_blockNumber') return { answer: sealed };
  const stateAt = STATE_TAG_AT[method];
  if (stateAt !== undefined) {
    const tag = params[stateAt];
    if (isNumber(tag) && BigInt(tag) > head) throw new ServerError(`header not found: block ${BigInt(tag)} is not sealed yet`);
    if (tag !== undefined && tag !== null && !SEALED_TAGS.has(tag as string)) return { params: [...params] };
    const rewritten = [...params];
    while (rewritten.length < stateAt) rewritten.push(method === 'eth_call' || method === 'eth_estimateGas' ? {} : null);
    rewritten[stateAt] = sealed;
    return { params: rewritten };
  }
  const blockAt = BLOCK_TAG_AT[method];
  if (blockAt !== undefined) {
    const tag = params[blockAt];
    if (isNumber(tag) && BigInt(tag) > head) return { answer: null };
    if (tag === undefined || tag === null || tag === 'pending' || SEALED_TAGS.has(tag as string)) {
      const rewritten = [...params];
      rewritten[blockAt] = sealed;
      return { params: rewritten };
    }
    return { params: [...params] };
  }
  if (method === 'eth_getLogs' && typeof params[0] === 'object' && params[0] !== null) {
    const filter = { ...(params[0] as Record<string, unknown>) };
    if (!('blockHash' in filter)) {
      for (const key of ['fromBlock', 'toBlock'] as const) {
        const tag = filter[key];
        if (
          tag === undefined ||
          tag === null ||
          tag === 'pending' ||
          SEALED_TAGS.has(tag as string) ||
          (isNumber(tag) && BigInt(tag) > head)
        )
          filter[key] = sealed;
      }
    }
    return { params: [filter, ...params.slice(1)] };
  }
  return { params: [...params] };
}

const beyond = (head: bigint, number: unknown) => isNumber(number) && BigInt(number) > head;

/** Hides from an engine answer what lies beyond the sealed head. */
export function hideTrialBlocks(head: bigint, method: string, result: unknown): unknown {
  if (result === null || typeof result !== 'object') return result;
  if (Array.isArray(result)) {
    if (method === 'eth_getLogs' || method === 'eth_getFilterLogs' || method === 'eth_getFilterChanges')
      return result.filter(
        (entry) => !(typeof entry === 'object' && entry !== null && beyond(head, (entry as { blockNumber?: unknown }).blockNumber)),
      );
    return result;
  }
  const record = result as Record<string, unknown>;
  if (method.startsWith('eth_getBlockBy') || method.startsWith('eth_getUncleBy')) return beyond(head, record.number) ? null : result;
  if (method === 'eth_getTransactionReceipt') return beyond(head, record.blockNumber) ? null : result;
  if (method === 'eth_getTransactionByHash' || method.startsWith('eth_getTransactionByBlock')) {
    return beyond(head, record.blockNumber) ? { ...record, blockHash: null, blockNumber: null, transactionIndex: null } : result;
  }
  return result;
}
