import { encodeFunctionData, erc20Abi, numberToHex, type Hex } from 'viem';
import { FlashlogError } from '../errors.ts';
import { BASE_TIME_PREDEPLOY, baseTimeAbi } from '../op/basetime.ts';
import { TRANSFER_TOPIC } from '../simulate/transfers.ts';
import type { Answer, BlockShape } from './compare.ts';

/**
 * What the checker records of one pending block, and how each recorded call maps to the node's
 * call for the same block once sealed. Pure: the I/O is in checker.ts.
 */

/** Which pending block an answer belongs to: its number, its hash (null while being built), its transactions so far. */
export interface PendingIdentity {
  readonly number: bigint;
  readonly hash: Hex | null;
  readonly transactions: readonly Hex[];
}

/** One call made to the gateway while a block was pending, with its answer. */
export interface RecordedCall {
  /** The field prefix: the method, with a qualifier where one method is asked two ways. */
  readonly label: string;
  readonly method: string;
  readonly params: readonly unknown[];
  readonly answer: Answer;
}

/** The answers recorded while the gateway served one version of a pending block. */
export interface Snapshot {
  readonly identity: PendingIdentity;
  readonly seenAtMs: number;
  readonly calls: readonly RecordedCall[];
}

const ZERO_HASH = /^0x0{64}$/;

/** The identity of a block as `eth_getBlockByNumber` answered it (hashes or full transactions). */
export function identityOf(block: { number?: unknown; hash?: unknown; transactions?: unknown }): PendingIdentity {
  if (typeof block.number !== 'string')
    throw new FlashlogError('UPSTREAM_INVALID', `pending block without a number: ${JSON.stringify(block).slice(0, 200)}`);
  const hash = typeof block.hash === 'string' && !ZERO_HASH.test(block.hash) ? (block.hash.toLowerCase() as Hex) : null;
  const transactions = Array.isArray(block.transactions)
    ? block.transactions.map((tx) => (typeof tx === 'string' ? tx : (tx as { hash: string }).hash).toLowerCase() as Hex)
    : [];
  return { number: BigInt(block.number), hash, transactions };
}

export const identityKey = (identity: PendingIdentity): string =>
  `${identity.number}/${identity.hash ?? 'building'}/${identity.transactions.length}/${identity.transactions.at(-1) ?? ''}`;

/** The node's sealed block at the pending block's height. */
export interface SealedAtHeight {
  readonly number: bigint;
  readonly hash: Hex;
  readonly transactions: readonly Hex[];
}

export type Relation =
  | { readonly kind: 'sealed'; readonly shape: BlockShape }
  /** The node sealed another block at this height: what the gateway served was withdrawn or replaced. */
  | { readonly kind: 'replaced'; readonly reason: string; readonly dropped: readonly Hex[] };

/**
 * Whether the pending block the gateway served is the node's sealed block (or its first
 * transactions, for a block being built), or a block the node never sealed.
 */
export function relate(identity: PendingIdentity, sealed: SealedAtHeight): Relation {
  const sealedTxs = sealed.transactions.map((hash) => hash.toLowerCase());
  const dropped = identity.transactions.filter((hash) => !sealedTxs.includes(hash));
  if (identity.hash !== null && identity.hash !== sealed.hash.toLowerCase()) {
    return { kind: 'replaced', reason: `pending hash ${identity.hash}, sealed ${sealed.hash}`, dropped };
  }
  const prefix = identity.transactions.length <= sealedTxs.length && identity.transactions.every((hash, i) => sealedTxs[i] === hash);
  if (!prefix) {
    return {
      kind: 'replaced',
      reason: `pending transactions (${identity.transactions.length}) are not the first of the sealed block's (${sealedTxs.length})`,
      dropped,
    };
  }
  return {
    kind: 'sealed',
    shape: { building: identity.hash === null, transactions: identity.transactions.length, sealedTransactions: sealedTxs.length },
  };
}

/** A pending block as `eth_getBlockByNumber(pending, true)` answers it, as far as the plan reads it. */
export interface PendingBlockBody {
  readonly transactions: readonly { readonly hash: string; readonly from?: string; readonly to?: string | null; readonly type?: string }[];
}

/**
 * Lagoon: the post-exec transactions (type 0x7d) of a pending block. No receipt of one is streamed
 * (specs lagoon/post-exec.md § Subblocks), so a gateway answers none (null, left out of the block's
 * receipts) until the block is sealed: such a missing receipt is not compared, never a mismatch.
 */
export const postExecHashesOf = (block: PendingBlockBody): string[] =>
  block.transactions.filter((tx) => tx.type?.toLowerCase() === '0x7d').map((tx) => tx.hash.toLowerCase());

export const POST_EXEC_RECEIPT_NOT_STREAMED =
  "a post-exec (0x7d) transaction's receipt is not streamed (lagoon/post-exec.md § Subblocks): the gateway answers none until the block is sealed";
export interface PendingReceipt {
  readonly transactionIndex?: string;
  readonly logs?: readonly { readonly address: string; readonly topics: readonly string[] }[];
}

export interface StatePlanOptions {
  /** Most accounts read per snapshot (the newest transactions' first). */
  readonly maxAccounts: number;
  /** Most ERC-20 `balanceOf` calls per snapshot. */
  readonly maxTokenCalls: number;
  /** The chain has BaseTime (0x4200…0030): call `timestampMs()`. */
  readonly baseTime: boolean;
}

/** A state read: a method, its params without the block, and the field prefix. */
export interface StateRead {
  readonly label: string;
  readonly method: 'eth_getBalance' | 'eth_getTransactionCount' | 'eth_getCode' | 'eth_getStorageAt' | 'eth_call';
  /** The params before the block parameter. */
  readonly params: readonly unknown[];
  /** Monotone over blocks (a nonce, BaseTime's clock): a pending answer below latest's is older than latest. */
  readonly monotone: boolean;
}

const topicAddress = (topic: string): Hex => `0x${topic.slice(-40)}` as Hex;

/**
 * The state reads of one pending block: balance, nonce, code and storage slot 0 of the accounts
 * its transactions touched (from and to of the newest first, then the addresses that logged), an
 * ERC-20 `balanceOf` of the recipients of its newest Transfer logs, and BaseTime's
 * `timestampMs()` where the chain has it. Storage: slot 0 only (a contract's first variable; on the
 * devnets the workload contract's counter and the token's totalSupply), since which slots a
 * transaction wrote needs a trace the pending block does not have; the ERC-20 balances reach the
 * token's mappings through the call.
 */
export function statePlan(block: PendingBlockBody, receipts: readonly PendingReceipt[], options: StatePlanOptions): StateRead[] {
  const accounts: Hex[] = [];
  const add = (address: string | null | undefined) => {
    if (!address) return;
    const lower = address.toLowerCase() as Hex;
    if (!accounts.includes(lower) && accounts.length < options.maxAccounts) accounts.push(lower);
  };
  for (const tx of [...block.transactions].reverse()) {
    add(tx.from);
    add(tx.to);
  }
  for (const receipt of receipts) for (const log of receipt.logs ?? []) add(log.address);
  const reads: StateRead[] = [];
  for (const account of accounts) {
    reads.push({ label: 'eth_getBalance', method: 'eth_getBalance', params: [account], monotone: false });
    reads.push({ label: 'eth_getTransactionCount', method: 'eth_getTransactionCount', params: [account], monotone: true });
    reads.push({ label: 'eth_getCode', method: 'eth_getCode', params: [account], monotone: false });
    reads.push({ label: 'eth_getStorageAt', method: 'eth_getStorageAt', params: [account, numberToHex(0, { size: 32 })], monotone: false });
  }
  const transfers = receipts
    .flatMap((receipt) => receipt.logs ?? [])
    .filter((log) => log.topics.length === 3 && log.topics[0]?.toLowerCase() === TRANSFER_TOPIC)
    .reverse()
    .slice(0, options.maxTokenCalls);
  for (const log of transfers) {
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [topicAddress(log.topics[2]!)] });
    reads.push({ label: 'eth_call[balanceOf]', method: 'eth_call', params: [{ to: log.address.toLowerCase(), data }], monotone: false });
  }
  if (options.baseTime) {
    const data = encodeFunctionData({ abi: baseTimeAbi, functionName: 'timestampMs' });
    reads.push({ label: 'eth_call[timestampMs]', method: 'eth_call', params: [{ to: BASE_TIME_PREDEPLOY, data }], monotone: true });
  }
  return reads;
}

/** A block-level read of the pending block: the call to the gateway, and the node's call for a sealed hash. */
export interface BlockRead {
  readonly label: string;
  readonly method: string;
  readonly params: readonly unknown[];
  nodeCall(sealed: SealedAtHeight): { method: string; params: readonly unknown[] };
}

export const blockReads: readonly BlockRead[] = [
  {
    label: 'eth_getBlockByNumber[hashes]',
    method: 'eth_getBlockByNumber',
    params: ['pending', false],
    nodeCall: (sealed) => ({ method: 'eth_getBlockByHash', params: [sealed.hash, false] }),
  },
  {
    label: 'eth_getBlockByNumber[full]',
    method: 'eth_getBlockByNumber',
    params: ['pending', true],
    nodeCall: (sealed) => ({ method: 'eth_getBlockByHash', params: [sealed.hash, true] }),
  },
  {
    label: 'eth_getBlockReceipts',
    method: 'eth_getBlockReceipts',
    params: ['pending'],
    nodeCall: (sealed) => ({ method: 'eth_getBlockReceipts', params: [sealed.hash] }),
  },
  {
    label: 'eth_getLogs',
    method: 'eth_getLogs',
    params: [{ fromBlock: 'pending', toBlock: 'pending' }],
    nodeCall: (sealed) => ({ method: 'eth_getLogs', params: [{ blockHash: sealed.hash }] }),
  },
];

/**
 * The node's answer cut to what a partial block can know: the first `transactions` transactions,
 * receipts and their logs. Whole answers otherwise.
 */
export function firstTransactionsOf(label: string, answer: Answer, shape: BlockShape): Answer {
  if (!('result' in answer) || shape.transactions >= shape.sealedTransactions) return answer;
  const k = shape.transactions;
  const result = answer.result;
  if (label.startsWith('eth_getBlockByNumber') && result && typeof result === 'object' && !Array.isArray(result)) {
    const block = result as { transactions?: unknown[] };
    return { result: { ...block, transactions: (block.transactions ?? []).slice(0, k) } };
  }
  if (label === 'eth_getBlockReceipts' && Array.isArray(result)) return { result: result.slice(0, k) };
  if (label === 'eth_getLogs' && Array.isArray(result)) {
    return { result: result.filter((log: { transactionIndex?: string }) => Number(BigInt(log.transactionIndex ?? '0x0')) < k) };
  }
  return answer;
}

/** The key `eth_getLogs` lists are matched by: the transaction and the log's place among its logs. */
export function logKey(entry: unknown, position: number, list: readonly unknown[]): string {
  const log = entry as { transactionHash?: string };
  const before = list.slice(0, position).filter((other) => (other as { transactionHash?: string }).transactionHash === log.transactionHash);
  return `${log.transactionHash ?? '?'}#${before.length}`;
}
