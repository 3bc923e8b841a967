import { hexToBigInt, numberToHex, type Hex } from 'viem';
import { blockSize, type RpcWithdrawal } from '../../src/rpc/header-fields.ts';
import { rawTransaction } from '../../src/source/raw-transaction.ts';
import { headerFromRpc, headerHash } from '../../src/op/header.ts';
import { BLOCK_NUMBER_AT } from './sealed-view.ts';

/**
 * The devnet's JSON-RPC answers in the shape op-geth gives them.
 *
 * The devnet stands in for an OP node (op-geth, op-reth), but EDR, underneath, shapes some answers
 * its own way. The values stay EDR's; only the shape changes, field by field as op-geth's
 * `newRPCTransaction` and `RPCMarshalBlock` (internal/ethapi/api.go) and go-ethereum's header
 * marshalling give them:
 * - a deposit (0x7e) has `v`, `r`, `s` and `gasPrice` 0x0, `mint` only when not zero (op-geth
 *   decodes an empty mint to nil), `isSystemTx` only when true, its nonce and
 *   `depositReceiptVersion` from its receipt, and no `accessList`, `maxFeePerGas`,
 *   `maxPriorityFeePerGas` (EDR gives them, zero or empty) nor `chainId`;
 * - a typed transaction (1, 2, 3, 4) has `yParity`, equal to its `v` (EDR gives no `yParity`);
 * - a legacy transaction signed under EIP-155 has `chainId` (EDR gives none), one signed before
 *   it has none;
 * - a mined transaction has `blockTimestamp`, its block's timestamp (as current go-ethereum, and
 *   so op-geth, gives it; the execution-apis schemas require it); a fee-market transaction not yet
 *   in a block has `gasPrice` = `maxFeePerGas`, as go-ethereum's pending transactions;
 * - a block has no `totalDifficulty` (go-ethereum dropped it after the merge) and its `size` is
 *   go-ethereum's `Block.Size()` (EDR leaves out the RLP string header of every typed
 *   transaction);
 * - a `newHeads` header is go-ethereum's header object: the block without `size`,
 *   `totalDifficulty`, `uncles`, `withdrawals` or transactions;
 * - the `pending` block is the latest one (`pendingBlockAsLatest`).
 */
type Json = Record<string, unknown>;
/** One call to the engine (the caller passes an exclusive one, so every read sees one chain). */
export type EngineCall = <R = unknown>(method: string, params?: readonly unknown[]) => Promise<R>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isHexString = (value: unknown): value is Hex => typeof value === 'string' && /^0x[0-9a-fA-F]*$/.test(value);
const FEE_MARKET_TYPES = new Set(['0x2', '0x3', '0x4']);
const TYPED = new Set(['0x1', '0x2', '0x3', '0x4']);

/** What shaping a transaction needs from outside it. */
export interface TransactionContext {
  /** The timestamp of the block the transaction is in (mined transactions). */
  readonly blockTimestamp?: string | undefined;
  /** A deposit's receipt fields, as op-geth reads them from the block's receipts. */
  readonly depositReceipt?: { readonly depositNonce?: unknown; readonly depositReceiptVersion?: unknown } | undefined;
}

/**
 * One transaction object of EDR's in op-geth's shape (see the file comment).
 *
 * @example shapeTransaction({ type: '0x2', v: '0x1', … }, { blockTimestamp: '0x6b08' }) // { …, v: '0x1', yParity: '0x1', blockTimestamp: '0x6b08' }
 */
export function shapeTransaction(tx: Json, context: TransactionContext = {}): Json {
  const type = typeof tx.type === 'string' ? tx.type.toLowerCase() : '0x0';
  const mined = typeof tx.blockHash === 'string';
  const { blockTimestamp: _ignored, ...rest } = tx;
  const out: Json = { ...rest };
  if (mined && context.blockTimestamp !== undefined) out.blockTimestamp = context.blockTimestamp;
  if (type === '0x7e') {
    delete out.accessList;
    delete out.maxFeePerGas;
    delete out.maxPriorityFeePerGas;
    delete out.maxFeePerBlobGas;
    delete out.chainId;
    delete out.yParity;
    out.gasPrice = '0x0';
    if (!isHexString(out.mint) || hexToBigInt(out.mint) === 0n) delete out.mint;
    if (out.isSystemTx !== true) delete out.isSystemTx;
    const receipt = context.depositReceipt;
    if (isHexString(receipt?.depositNonce)) {
      out.nonce = numberToHex(hexToBigInt(receipt.depositNonce));
      if (isHexString(receipt.depositReceiptVersion)) out.depositReceiptVersion = numberToHex(hexToBigInt(receipt.depositReceiptVersion));
    }
    out.v = '0x0';
    out.r = '0x0';
    out.s = '0x0';
    return out;
  }
  delete out.sourceHash;
  delete out.mint;
  delete out.isSystemTx;
  if (TYPED.has(type)) {
    if (isHexString(out.v)) out.yParity = numberToHex(hexToBigInt(out.v));
    if (FEE_MARKET_TYPES.has(type) && !mined && isHexString(out.maxFeePerGas)) out.gasPrice = out.maxFeePerGas;
    return out;
  }
  // Legacy: go-ethereum derives the chain id from v (27/28: none; otherwise (v - 35) / 2).
  delete out.yParity;
  delete out.chainId;
  if (isHexString(out.v)) {
    const v = hexToBigInt(out.v);
    if (v >= 35n) out.chainId = numberToHex((v - 35n) / 2n);
  }
  return out;
}

/** A header as go-ethereum's `newHeads` sends it: the block's fields without the body or its size. */
export function shapeHeader(block: Json): Json {
  const { transactions: _t, uncles: _u, withdrawals: _w, size: _s, totalDifficulty: _d, ...header } = block;
  return header;
}

/**
 * A block's go-ethereum size from its full form (EDR's answer with full transactions), or
 * undefined when the header or a transaction cannot be rebuilt to its hash (the size is then
 * left as EDR gives it).
 */
export function goEthereumSize(block: Json): Hex | undefined {
  if (!Array.isArray(block.transactions) || !block.transactions.every(isObject)) return undefined;
  let header;
  try {
    header = headerFromRpc(block, 'block');
  } catch {
    return undefined;
  }
  if (headerHash(header) !== String(block.hash).toLowerCase()) return undefined;
  const raws: Hex[] = [];
  for (const tx of block.transactions as Json[]) {
    const raw = rawTransaction(tx);
    if (raw === null) return undefined;
    raws.push(raw);
  }
  return blockSize(header, raws, (Array.isArray(block.withdrawals) ? block.withdrawals : []) as RpcWithdrawal[]);
}

/**
 * A block read at `pending` as op-geth serves it by default (without
 * `--rollup.computependingblock`, miner.Pending): the latest block, with its hash, number and
 * miner, where EDR builds a block from its mempool with number, hash and nonce null. State reads
 * at `pending` are left to EDR (the nonce counts the mempool, as op-geth's pool nonce does).
 *
 * @example pendingBlockAsLatest('eth_getBlockByNumber', ['pending', true]) // ['latest', true]
 */
export function pendingBlockAsLatest(method: string, params: readonly unknown[]): unknown[] {
  const at = BLOCK_NUMBER_AT[method];
  if (at !== undefined) return params.map((param, i) => (i === at && param === 'pending' ? 'latest' : param));
  if (method === 'eth_getLogs' && isObject(params[0])) {
    const filter = { ...params[0] };
    for (const key of ['fromBlock', 'toBlock']) if (filter[key] === 'pending') filter[key] = 'latest';
    return [filter, ...params.slice(1)];
  }
  return [...params];
}

const TRANSACTION_METHODS = new Set([
  'eth_getTransactionByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
]);
const BLOCK_METHODS = new Set(['eth_getBlockByNumber', 'eth_getBlockByHash']);

/** Small maps from a block hash (or a transaction in a block) to what never changes for it. */
function boundedCache<V>(limit: number) {
  const map = new Map<string, V>();
  return {
    get: (key: string) => map.get(key),
    set(key: string, value: V) {
      if (map.size >= limit) map.delete(map.keys().next().value!);
      map.set(key, value);
    },
  };
}

export interface OpGethShape {
  /** The answer of `method` in op-geth's shape; reads the engine through `call` for what it lacks. */
  answer(call: EngineCall, method: string, result: unknown): Promise<unknown>;
}

export function createOpGethShape(): OpGethShape {
  /** By block hash: a block's timestamp and go-ethereum size never change. */
  const timestamps = boundedCache<string>(1024);
  const sizes = boundedCache<Hex | undefined>(1024);
  /** By `blockHash/txHash`: a deposit's receipt fields. */
  const deposits = boundedCache<TransactionContext['depositReceipt']>(4096);

  async function depositReceipt(call: EngineCall, tx: Json): Promise<TransactionContext['depositReceipt']> {
    if (tx.type !== '0x7e' || typeof tx.blockHash !== 'string') return undefined;
    const key = `${tx.blockHash}/${String(tx.hash)}`;
    const kept = deposits.get(key);
    if (kept) return kept;
    const receipt = await call<Json | null>('eth_getTransactionReceipt', [tx.hash]);
    if (!receipt || receipt.blockHash !== tx.blockHash) return undefined;
    const fields = { depositNonce: receipt.depositNonce, depositReceiptVersion: receipt.depositReceiptVersion };
    deposits.set(key, fields);
    return fields;
  }

  async function timestampOf(call: EngineCall, blockHash: unknown): Promise<string | undefined> {
    if (typeof blockHash !== 'string') return undefined;
    const kept = timestamps.get(blockHash);
    if (kept) return kept;
    const block = await call<Json | null>('eth_getBlockByHash', [blockHash, false]);
    if (!block || typeof block.timestamp !== 'string') return undefined;
    timestamps.set(blockHash, block.timestamp);
    return block.timestamp;
  }

  async function transaction(call: EngineCall, tx: Json, blockTimestamp?: string): Promise<Json> {
    return shapeTransaction(tx, {
      blockTimestamp: blockTimestamp ?? (await timestampOf(call, tx.blockHash)),
      depositReceipt: await depositReceipt(call, tx),
    });
  }

  async function block(call: EngineCall, found: Json): Promise<Json> {
    const { totalDifficulty: _td, ...out } = found;
    const hash = String(found.hash);
    if (typeof found.timestamp === 'string') timestamps.set(hash, found.timestamp);
    let size = sizes.get(hash);
    if (size === undefined) {
      const full =
        Array.isArray(found.transactions) && found.transactions.every(isObject)
          ? found
          : await call<Json | null>('eth_getBlockByHash', [hash, true]);
      size = full ? goEthereumSize(full) : undefined;
      if (size !== undefined) sizes.set(hash, size);
    }
    if (size !== undefined) out.size = size;
    if (Array.isArray(found.transactions)) {
      const transactions: unknown[] = [];
      for (const tx of found.transactions) transactions.push(isObject(tx) ? await transaction(call, tx, found.timestamp as string) : tx);
      out.transactions = transactions;
    }
    return out;
  }

  return {
    async answer(call, method, result) {
      if (!isObject(result)) return result;
      if (BLOCK_METHODS.has(method)) return block(call, result);
      if (TRANSACTION_METHODS.has(method)) return transaction(call, result);
      return result;
    },
  };
}
