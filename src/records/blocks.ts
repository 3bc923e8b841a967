import { toHex } from 'viem';
import { z } from 'zod';
import { address, bloom, hash32, hexBytes, hexPatterns, payloadId, quantity } from '../schemas/hex.ts';
import { withdrawalSchema } from '../schemas/flashblock.ts';
import { count, isObject, keysInOrder, matches, optional, optionalNullable, order } from './fast-check.ts';
import { isRpcLog, logRecord, rpcLogSchema, type LogRecordValue } from './logs.ts';
import { topics, type TopicRecord } from './topics.ts';

/** Lagoon's post-exec transaction type byte (specs lagoon/post-exec.md); src/records/ reads only the byte. */
const isPostExecTx = (raw: string): boolean => raw.slice(0, 4).toLowerCase() === '0x7d';

/** A receipt as eth_getTransactionReceipt returns it (OP fields optional). */
export const rpcReceiptSchema = z.looseObject({
  transactionHash: hash32,
  transactionIndex: quantity,
  blockHash: hash32,
  blockNumber: quantity,
  from: address,
  to: address.nullable(),
  cumulativeGasUsed: quantity,
  gasUsed: quantity,
  effectiveGasPrice: quantity.optional(),
  contractAddress: address.nullable(),
  logs: z.array(rpcLogSchema),
  logsBloom: bloom,
  status: quantity,
  type: quantity,
  l1Fee: quantity.optional().nullable(),
  l1GasPrice: quantity.optional().nullable(),
  l1GasUsed: quantity.optional().nullable(),
  l1FeeScalar: z.string().optional().nullable(),
  l1BaseFeeScalar: quantity.optional().nullable(),
  l1BlobBaseFee: quantity.optional().nullable(),
  l1BlobBaseFeeScalar: quantity.optional().nullable(),
  depositNonce: quantity.optional().nullable(),
  depositReceiptVersion: quantity.optional().nullable(),
  /** Lagoon: the Sequencer-Defined Metering gas refund of the transaction (specs lagoon/sdm.md § Receipt Extension); absent without one. */
  opGasRefund: quantity.optional().nullable(),
});
export type RpcReceipt = z.output<typeof rpcReceiptSchema>;

/** The state of one account after the block so far; storage holds only changed slots. */
export const accountDiffSchema = z.looseObject({
  balance: quantity.optional(),
  nonce: quantity.optional(),
  code: hexBytes.optional(),
  storage: z.record(hash32, hash32).optional(),
});
export type AccountDiff = z.output<typeof accountDiffSchema>;

export const pendingHeaderSchema = z.looseObject({
  number: quantity,
  parentHash: hash32,
  parentBeaconBlockRoot: hash32,
  miner: address,
  prevRandao: hash32,
  gasLimit: quantity,
  timestamp: quantity,
  extraData: hexBytes,
  baseFeePerGas: quantity,
  gasUsed: quantity,
  receiptsRoot: hash32,
  logsBloom: bloom,
  /**
   * `stateRoot`, `flashblockHash`, `withdrawalsRoot` as the feed gave them. Zero is "not given",
   * never a value (OP's subblocks zero all three in every frame; Base's builder zeroed the state
   * root between its first and last flashblock): readers take the sealed block's from the node.
   */
  stateRoot: hash32,
  /** The partial block's hash as the builder computed it; on Base it is not the final hash; zero: not given. */
  flashblockHash: hash32,
  withdrawalsRoot: hash32,
  blobGasUsed: quantity.nullable(),
  withdrawals: z.array(withdrawalSchema),
  /**
   * Blocks source (200 ms blocks): the block's real hash and the node's header fields below, as
   * the node answered them; absent on a flashblocks block (not sealed yet) and in older logs.
   */
  hash: hash32.optional(),
  /** Blocks source: the block's time in milliseconds (the node's `timestampMs`, or from BaseTime). */
  timestampMs: quantity.optional(),
  transactionsRoot: hash32.optional(),
  /** The block's RLP size in bytes. */
  size: quantity.optional(),
  excessBlobGas: quantity.optional(),
  /** EIP-7685 requests hash (Isthmus and later headers). */
  requestsHash: hash32.optional(),
});
export type PendingHeader = z.output<typeof pendingHeaderSchema>;

/**
 * flashlog.blocks: the pre-confirmed block after each flashblock. Key: block number (decimal).
 * `transactions` holds every transaction so far; `firstNew` is where this flashblock's start.
 * `receipts` cover the new transactions only (null when no executor produced them);
 * `stateDiff` is the state of every touched account for the block so far.
 */
export const blockRecordSchema = z.looseObject({
  v: z.literal(1),
  blockNumber: quantity,
  index: z.number().int().nonnegative(),
  payloadId,
  header: pendingHeaderSchema,
  /**
   * `rpc`: on a blocks source, a transaction of a type flashlog does not know carries the node's
   * own JSON of it, kept as the node gave it, so the gateway serves what the node serves.
   */
  transactions: z.array(z.object({ hash: hash32, raw: hexBytes, rpc: z.record(z.string(), z.unknown()).optional() })),
  firstNew: z.number().int().nonnegative(),
  receipts: z.array(rpcReceiptSchema).nullable(),
  stateDiff: z.record(address, accountDiffSchema).nullable(),
  executor: z.enum(['local', 'metadata', 'node']).nullable(),
  /**
   * Lagoon: the block's post-exec transaction (type 0x7d) as of this step, kept apart from
   * `transactions` (which only grow): each subblock restates it and only the last one's is the
   * sealed block's last transaction. Absent or null when the block has none so far.
   */
  postExecTx: z
    .object({ hash: hash32, raw: hexBytes.refine(isPostExecTx, 'expected a post-exec transaction (type byte 0x7d)') })
    .nullable()
    .optional(),
});
export type BlockRecord = z.output<typeof blockRecordSchema>;

const receiptOrder = order(rpcReceiptSchema);
const headerOrder = order(pendingHeaderSchema);
const withdrawalOrder = order(withdrawalSchema);
const accountOrder = order(accountDiffSchema);
const transactionOrder: ReadonlyMap<string, number> = new Map([
  ['hash', 0],
  ['raw', 1],
  ['rpc', 2],
]);

function isReceipt(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, receiptOrder)) return false;
  if (!(
    matches(hexPatterns.hash32, value.transactionHash) &&
    matches(hexPatterns.quantity, value.transactionIndex) &&
    matches(hexPatterns.hash32, value.blockHash) &&
    matches(hexPatterns.quantity, value.blockNumber) &&
    matches(hexPatterns.address, value.from) &&
    (value.to === null || matches(hexPatterns.address, value.to)) &&
    matches(hexPatterns.quantity, value.cumulativeGasUsed) &&
    matches(hexPatterns.quantity, value.gasUsed) &&
    optional(hexPatterns.quantity, value.effectiveGasPrice) &&
    (value.contractAddress === null || matches(hexPatterns.address, value.contractAddress)) &&
    matches(hexPatterns.bloom, value.logsBloom) &&
    matches(hexPatterns.quantity, value.status) &&
    matches(hexPatterns.quantity, value.type)
  ))
    return false;
  if (!(
    optionalNullable(hexPatterns.quantity, value.l1Fee) &&
    optionalNullable(hexPatterns.quantity, value.l1GasPrice) &&
    optionalNullable(hexPatterns.quantity, value.l1GasUsed) &&
    (value.l1FeeScalar === undefined || value.l1FeeScalar === null || typeof value.l1FeeScalar === 'string') &&
    optionalNullable(hexPatterns.quantity, value.l1BaseFeeScalar) &&
    optionalNullable(hexPatterns.quantity, value.l1BlobBaseFee) &&
    optionalNullable(hexPatterns.quantity, value.l1BlobBaseFeeScalar) &&
    optionalNullable(hexPatterns.quantity, value.depositNonce) &&
    optionalNullable(hexPatterns.quantity, value.depositReceiptVersion) &&
    optionalNullable(hexPatterns.quantity, value.opGasRefund)
  ))
    return false;
  if (!Array.isArray(value.logs)) return false;
  for (const log of value.logs) if (!isRpcLog(log)) return false;
  return true;
}

function isAccountDiff(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, accountOrder)) return false;
  if (!(
    optional(hexPatterns.quantity, value.balance) &&
    optional(hexPatterns.quantity, value.nonce) &&
    optional(hexPatterns.hexBytes, value.code)
  ))
    return false;
  if (value.storage === undefined) return true;
  if (!isObject(value.storage)) return false;
  for (const slot in value.storage) if (!hexPatterns.hash32.test(slot) || !matches(hexPatterns.hash32, value.storage[slot])) return false;
  return true;
}

function isWithdrawal(value: unknown): boolean {
  return (
    isObject(value) &&
    keysInOrder(value, withdrawalOrder) &&
    matches(hexPatterns.quantity, value.index) &&
    matches(hexPatterns.quantity, value.validatorIndex) &&
    matches(hexPatterns.address, value.address) &&
    matches(hexPatterns.quantity, value.amount)
  );
}

function isHeader(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, headerOrder)) return false;
  if (!(
    matches(hexPatterns.quantity, value.number) &&
    matches(hexPatterns.hash32, value.parentHash) &&
    matches(hexPatterns.hash32, value.parentBeaconBlockRoot) &&
    matches(hexPatterns.address, value.miner) &&
    matches(hexPatterns.hash32, value.prevRandao) &&
    matches(hexPatterns.quantity, value.gasLimit) &&
    matches(hexPatterns.quantity, value.timestamp) &&
    matches(hexPatterns.hexBytes, value.extraData) &&
    matches(hexPatterns.quantity, value.baseFeePerGas) &&
    matches(hexPatterns.quantity, value.gasUsed) &&
    matches(hexPatterns.hash32, value.receiptsRoot) &&
    matches(hexPatterns.bloom, value.logsBloom) &&
    matches(hexPatterns.hash32, value.stateRoot) &&
    matches(hexPatterns.hash32, value.flashblockHash) &&
    matches(hexPatterns.hash32, value.withdrawalsRoot) &&
    (value.blobGasUsed === null || matches(hexPatterns.quantity, value.blobGasUsed)) &&
    Array.isArray(value.withdrawals) &&
    optional(hexPatterns.hash32, value.hash) &&
    optional(hexPatterns.quantity, value.timestampMs) &&
    optional(hexPatterns.hash32, value.transactionsRoot) &&
    optional(hexPatterns.quantity, value.size) &&
    optional(hexPatterns.quantity, value.excessBlobGas) &&
    optional(hexPatterns.hash32, value.requestsHash)
  ))
    return false;
  for (const withdrawal of value.withdrawals as unknown[]) if (!isWithdrawal(withdrawal)) return false;
  return true;
}

/** A transaction of a block record: exactly `{hash, raw}`, or `{hash, raw, rpc}` with an object (the schema's strict object would drop other keys). */
function isTransaction(value: unknown): boolean {
  if (
    !isObject(value) ||
    !keysInOrder(value, transactionOrder) ||
    !matches(hexPatterns.hash32, value.hash) ||
    !matches(hexPatterns.hexBytes, value.raw)
  )
    return false;
  let keys = 0;
  for (const key in value) if (Object.hasOwn(value, key)) keys++;
  return keys === 2 || (keys === 3 && isObject(value.rpc));
}

/**
 * blockRecordSchema (a flashlog.blocks value), checking `transactions` from `firstChecked` on: the
 * ones before it are known to the caller (the block the view holds, compared string for string).
 */
export function isBlockRecordValue(value: unknown, firstChecked = 0): boolean {
  if (!isObject(value)) return false;
  if (!(
    value.v === 1 &&
    matches(hexPatterns.quantity, value.blockNumber) &&
    count(value.index) &&
    matches(hexPatterns.payloadId, value.payloadId) &&
    count(value.firstNew) &&
    isHeader(value.header) &&
    Array.isArray(value.transactions) &&
    (value.executor === null || value.executor === 'local' || value.executor === 'metadata' || value.executor === 'node')
  ))
    return false;
  const transactions = value.transactions as unknown[];
  for (let i = firstChecked; i < transactions.length; i++) if (!isTransaction(transactions[i])) return false;
  const postExec = value.postExecTx;
  if (postExec !== undefined && postExec !== null && !(isTransaction(postExec) && isPostExecTx((postExec as { raw: string }).raw)))
    return false;
  if (value.receipts !== null) {
    if (!Array.isArray(value.receipts)) return false;
    for (const receipt of value.receipts) if (!isReceipt(receipt)) return false;
  }
  if (value.stateDiff !== null) {
    if (!isObject(value.stateDiff)) return false;
    for (const account in value.stateDiff) if (!hexPatterns.address.test(account) || !isAccountDiff(value.stateDiff[account])) return false;
  }
  return true;
}

/**
 * What a block record is written from: the assembled block so far (src/chain/assemble.ts's
 * AssembledBlock) and what executing it yielded (src/chain/execution-output.ts's ExecutionOutput).
 */
export interface BlockRecordSource {
  readonly blockNumber: bigint;
  readonly index: number;
  readonly payloadId: string;
  readonly header: PendingHeader;
  /**
   * Every transaction so far, in order; hash = keccak256 of the EIP-2718 bytes; `rpc` the node's
   * JSON of a transaction of a type flashlog does not know (blocks source).
   */
  readonly transactions: readonly { readonly hash: `0x${string}`; readonly raw: `0x${string}`; readonly rpc?: Record<string, unknown> }[];
  /** Position in `transactions` of this flashblock's first new transaction. */
  readonly firstNew: number;
  /** Lagoon: the block's post-exec transaction as of this step (a subblocks feed's `diff.post_exec_tx`); null or absent without one. */
  readonly postExecTx?: { readonly hash: `0x${string}`; readonly raw: `0x${string}` } | null;
}
export interface BlockRecordExecution {
  readonly receipts: RpcReceipt[];
  readonly stateDiff: Record<string, AccountDiff> | null;
}

/** flashlog.blocks (the pre-confirmed block so far) and one flashlog.logs record per log of its new transactions. */
export function blockRecords(
  block: BlockRecordSource,
  execution: BlockRecordExecution | null,
  executor: BlockRecord['executor'],
): TopicRecord[] {
  const blockNumber = toHex(block.blockNumber);
  const key = block.blockNumber.toString();
  const blockValue: BlockRecord = {
    v: 1,
    blockNumber,
    index: block.index,
    payloadId: block.payloadId,
    header: block.header,
    transactions: block.transactions.map((tx) => (tx.rpc ? { hash: tx.hash, raw: tx.raw, rpc: tx.rpc } : { hash: tx.hash, raw: tx.raw })),
    firstNew: block.firstNew,
    receipts: execution?.receipts ?? null,
    stateDiff: execution?.stateDiff ?? null,
    executor: execution ? executor : null,
    ...(block.postExecTx ? { postExecTx: { hash: block.postExecTx.hash, raw: block.postExecTx.raw } } : {}),
  };
  const records: TopicRecord[] = [{ topic: topics.blocks, key, value: JSON.stringify(blockValue) }];
  for (const receipt of execution?.receipts ?? []) {
    for (const log of receipt.logs) {
      const value: LogRecordValue = { v: 1, index: block.index, ...log };
      records.push(logRecord(value));
    }
  }
  return records;
}
