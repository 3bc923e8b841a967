import { numberToHex, type Hex } from 'viem';
import type { RpcCall } from '../../src/jsonrpc/protocol.ts';
import type { Engine } from './edr-chain.ts';

/**
 * What a Denim node adds to JSON-RPC answers, on top of the devnet's dispatch:
 * - `timestampMs` on blocks and headers, `blockTimestampMs` on mined transactions and on logs
 *   (eth_getLogs, the logs nested in receipts; not the receipt's top level), hex quantities;
 * - `safe` and `finalized` trailing the unsafe head by a fixed number of blocks (EDR answers
 *   both tags with its latest block), and `optimism_syncStatus` as op-node's gives them.
 */
export interface DenimHeads {
  timestampMs(number: bigint): bigint;
  head(): bigint;
  readonly safeLagBlocks: number;
  readonly finalizedLagBlocks: number;
}

type Dispatch = (call: RpcCall) => Promise<unknown>;
type Json = Record<string, unknown>;

export const safeNumber = (heads: DenimHeads) => maxZero(heads.head() - BigInt(heads.safeLagBlocks));
export const finalizedNumber = (heads: DenimHeads) => maxZero(heads.head() - BigInt(heads.finalizedLagBlocks));
const maxZero = (value: bigint) => (value < 0n ? 0n : value);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const msOf = (heads: DenimHeads, blockNumber: unknown) =>
  typeof blockNumber === 'string' ? numberToHex(heads.timestampMs(BigInt(blockNumber))) : undefined;

function withLogMillis(heads: DenimHeads, log: unknown): unknown {
  if (!isObject(log)) return log;
  const ms = msOf(heads, log.blockNumber);
  return ms ? { ...log, blockTimestampMs: ms } : log;
}

function withTxMillis(heads: DenimHeads, tx: unknown): unknown {
  if (!isObject(tx)) return tx;
  const ms = msOf(heads, tx.blockNumber);
  return ms ? { ...tx, blockTimestampMs: ms } : tx;
}

function withReceiptMillis(heads: DenimHeads, receipt: unknown): unknown {
  if (!isObject(receipt) || !Array.isArray(receipt.logs)) return receipt;
  return { ...receipt, logs: receipt.logs.map((log) => withLogMillis(heads, log)) };
}

/** A block or header with `timestampMs`, and `blockTimestampMs` on its full transactions. */
export function withBlockMillis(heads: DenimHeads, block: unknown): unknown {
  if (!isObject(block)) return block;
  const ms = msOf(heads, block.number);
  if (!ms) return block;
  const transactions = Array.isArray(block.transactions) ? block.transactions.map((tx) => withTxMillis(heads, tx)) : block.transactions;
  return { ...block, timestampMs: ms, ...(transactions ? { transactions } : {}) };
}

/** The answer of `method` with the Denim millisecond fields added. */
export function withMillis(heads: DenimHeads, method: string, result: unknown): unknown {
  switch (method) {
    case 'eth_getBlockByNumber':
    case 'eth_getBlockByHash':
    case 'eth_getHeaderByNumber':
    case 'eth_getHeaderByHash':
      return withBlockMillis(heads, result);
    case 'eth_getTransactionByHash':
    case 'eth_getTransactionByBlockHashAndIndex':
    case 'eth_getTransactionByBlockNumberAndIndex':
      return withTxMillis(heads, result);
    case 'eth_getTransactionReceipt':
      return withReceiptMillis(heads, result);
    case 'eth_getBlockReceipts':
      return Array.isArray(result) ? result.map((receipt) => withReceiptMillis(heads, receipt)) : result;
    case 'eth_getLogs':
    case 'eth_getFilterLogs':
    case 'eth_getFilterChanges':
      return Array.isArray(result) ? result.map((log) => withLogMillis(heads, log)) : result;
    default:
      return result;
  }
}

/** `safe` / `finalized` in any position of `params` become the block numbers they stand for. */
function resolveTag(heads: DenimHeads, param: unknown): unknown {
  if (param === 'safe') return numberToHex(safeNumber(heads));
  if (param === 'finalized') return numberToHex(finalizedNumber(heads));
  return param;
}

function resolveTags(heads: DenimHeads, params: unknown): unknown {
  if (!Array.isArray(params)) return params;
  return params.map((param) => {
    if (!isObject(param) || !('fromBlock' in param || 'toBlock' in param)) return resolveTag(heads, param);
    return Object.fromEntries(
      Object.entries(param).map(([key, value]) => [key, key === 'fromBlock' || key === 'toBlock' ? resolveTag(heads, value) : value]),
    );
  });
}

/** optimism_syncStatus: the L2 part of op-node's answer (unsafe, safe, finalized heads). */
async function syncStatus(engine: Engine, heads: DenimHeads): Promise<Json> {
  const ref = async (number: bigint) => {
    const block = await engine.call<{ hash: Hex; number: Hex; timestamp: Hex; parentHash: Hex } | null>('eth_getBlockByNumber', [
      numberToHex(number),
      false,
    ]);
    return block
      ? { hash: block.hash, number: Number(block.number), parentHash: block.parentHash, timestamp: Number(block.timestamp) }
      : null;
  };
  const [unsafe, safe, finalized] = await Promise.all([ref(heads.head()), ref(safeNumber(heads)), ref(finalizedNumber(heads))]);
  return { unsafe_l2: unsafe, safe_l2: safe, finalized_l2: finalized, cross_unsafe_l2: unsafe, local_safe_l2: safe };
}

export function denimDispatch(inner: Dispatch, engine: Engine, heads: DenimHeads): Dispatch {
  return async (call) => {
    if (call.method === 'optimism_syncStatus') return syncStatus(engine, heads);
    const result = await inner({ ...call, params: resolveTags(heads, call.params) });
    return withMillis(heads, call.method, result);
  };
}
