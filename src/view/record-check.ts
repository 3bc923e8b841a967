import { withdrawalSchema } from '../schemas/flashblock.ts';
import { hexPatterns } from '../schemas/hex.ts';
import { accountDiffSchema, pendingHeaderSchema, rpcLogSchema, rpcReceiptSchema } from '../schemas/records.ts';

/**
 * A fast yes for records the schemas of src/schemas/records.ts accept, for the view's replay.
 *
 * Why this is hand-written: zod builds an issue list and an output copy of every object it checks,
 * which cost more than reading and parsing a record together (a full replay validated every one of
 * its million records that way). These checks test the same fields with the same patterns
 * (`hexPatterns`) in plain loops. They are only ever allowed to say less than the schemas: `true`
 * means the schema accepts the value unchanged; `false` means "ask the schema", which then either
 * accepts the value after all or names the field it rejects (record-check.test.ts holds the two
 * together on valid records and on one broken field at a time). The view keeps the value itself, so
 * a yes also needs each object's keys in the order the schema would output them (its own fields in
 * its order, then unknown ones): subscribers and RPC answers serialize these objects as they are.
 */
type Value = Record<string, unknown>;

const { quantity, hexBytes, hash32, address, bloom, payloadId } = hexPatterns;

const isObject = (value: unknown): value is Value => typeof value === 'object' && value !== null && !Array.isArray(value);
const matches = (pattern: RegExp, value: unknown): boolean => typeof value === 'string' && pattern.test(value);
/** A key that zod's `.optional().nullable()` accepts: absent, null or matching. */
const optionalNullable = (pattern: RegExp, value: unknown): boolean => value === undefined || value === null || matches(pattern, value);
const optional = (pattern: RegExp, value: unknown): boolean => value === undefined || matches(pattern, value);
const count = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Position of each field in a schema, in the schema's order. */
const order = (schema: { shape: Record<string, unknown> }): ReadonlyMap<string, number> =>
  new Map(Object.keys(schema.shape).map((key, i) => [key, i]));
const logOrder = order(rpcLogSchema);
const receiptOrder = order(rpcReceiptSchema);
const headerOrder = order(pendingHeaderSchema);
const withdrawalOrder = order(withdrawalSchema);
const accountOrder = order(accountDiffSchema);
const transactionOrder: ReadonlyMap<string, number> = new Map([
  ['hash', 0],
  ['raw', 1],
]);

/** Whether the schema's output would list the keys as `value` does: known ones in its order, then unknown ones. */
function keysInOrder(value: Value, positions: ReadonlyMap<string, number>): boolean {
  let last = -1;
  let unknownSeen = false;
  for (const key in value) {
    const position = positions.get(key);
    if (position === undefined) {
      unknownSeen = true;
    } else {
      if (unknownSeen || position < last) return false;
      last = position;
    }
  }
  return true;
}

function everyMatches(pattern: RegExp, value: unknown): boolean {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (!matches(pattern, item)) return false;
  return true;
}

/** rpcLogSchema; `ordered`: and its keys in the schema's order (for a log the view keeps). */
export function isRpcLog(value: unknown, ordered = true): boolean {
  if (!isObject(value) || (ordered && !keysInOrder(value, logOrder))) return false;
  return (
    matches(address, value.address) &&
    everyMatches(hash32, value.topics) &&
    matches(hexBytes, value.data) &&
    matches(quantity, value.blockNumber) &&
    matches(hash32, value.blockHash) &&
    matches(quantity, value.blockTimestamp) &&
    optional(quantity, value.blockTimestampMs) &&
    matches(hash32, value.transactionHash) &&
    matches(quantity, value.transactionIndex) &&
    matches(quantity, value.logIndex) &&
    typeof value.removed === 'boolean'
  );
}

const inner = (pattern: RegExp): string => pattern.source.slice(1, -1);
const text = (pattern: RegExp): string => `"${inner(pattern)}"`;
const logFields = [
  `"address":${text(address)}`,
  `"topics":\\[(?:${text(hash32)}(?:,${text(hash32)})*)?\\]`,
  `"data":${text(hexBytes)}`,
  `"blockNumber":${text(quantity)}`,
  `"blockHash":${text(hash32)}`,
  `"blockTimestamp":${text(quantity)}`,
  `"transactionHash":${text(hash32)}`,
  `"transactionIndex":${text(quantity)}`,
  `"logIndex":${text(quantity)}`,
  '"removed":(?:true|false)',
].join(',');
// At most 15 digits: always a safe integer.
const versionAndIndex = '"v":1,"index":(?:0|[1-9][0-9]{0,14})';
/** The text of a log record as flashlog's writers lay it out (JSON.stringify: no spaces, no escapes in hex). */
const logRecordTexts = [new RegExp(`^\\{${versionAndIndex},${logFields}\\}$`), new RegExp(`^\\{${logFields},${versionAndIndex}\\}$`)];

/**
 * A yes for a flashlog.logs value from its text alone, without parsing it: the text is one JSON
 * object with exactly the schema's fields, in the order flashlog's writers put them, each matching
 * its pattern. Any other layout (other key order, extra fields, spaces) is a no, to be parsed.
 */
export function isLogRecordText(value: string): boolean {
  return logRecordTexts[0]!.test(value) || logRecordTexts[1]!.test(value);
}

/** logRecordSchema (a flashlog.logs value). */
export function isLogRecordValue(value: unknown): boolean {
  // The view keeps nothing of a log record (only its verdict), so the order of its keys is free.
  return isRpcLog(value, false) && (value as Value).v === 1 && count((value as Value).index);
}

function isReceipt(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, receiptOrder)) return false;
  if (!(
    matches(hash32, value.transactionHash) &&
    matches(quantity, value.transactionIndex) &&
    matches(hash32, value.blockHash) &&
    matches(quantity, value.blockNumber) &&
    matches(address, value.from) &&
    (value.to === null || matches(address, value.to)) &&
    matches(quantity, value.cumulativeGasUsed) &&
    matches(quantity, value.gasUsed) &&
    optional(quantity, value.effectiveGasPrice) &&
    (value.contractAddress === null || matches(address, value.contractAddress)) &&
    matches(bloom, value.logsBloom) &&
    matches(quantity, value.status) &&
    matches(quantity, value.type)
  ))
    return false;
  if (!(
    optionalNullable(quantity, value.l1Fee) &&
    optionalNullable(quantity, value.l1GasPrice) &&
    optionalNullable(quantity, value.l1GasUsed) &&
    (value.l1FeeScalar === undefined || value.l1FeeScalar === null || typeof value.l1FeeScalar === 'string') &&
    optionalNullable(quantity, value.l1BaseFeeScalar) &&
    optionalNullable(quantity, value.l1BlobBaseFee) &&
    optionalNullable(quantity, value.l1BlobBaseFeeScalar) &&
    optionalNullable(quantity, value.depositNonce) &&
    optionalNullable(quantity, value.depositReceiptVersion)
  ))
    return false;
  if (!Array.isArray(value.logs)) return false;
  for (const log of value.logs) if (!isRpcLog(log)) return false;
  return true;
}

function isAccountDiff(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, accountOrder)) return false;
  if (!(optional(quantity, value.balance) && optional(quantity, value.nonce) && optional(hexBytes, value.code))) return false;
  if (value.storage === undefined) return true;
  if (!isObject(value.storage)) return false;
  for (const slot in value.storage) if (!hash32.test(slot) || !matches(hash32, value.storage[slot])) return false;
  return true;
}

function isWithdrawal(value: unknown): boolean {
  return (
    isObject(value) &&
    keysInOrder(value, withdrawalOrder) &&
    matches(quantity, value.index) &&
    matches(quantity, value.validatorIndex) &&
    matches(address, value.address) &&
    matches(quantity, value.amount)
  );
}

function isHeader(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, headerOrder)) return false;
  if (!(
    matches(quantity, value.number) &&
    matches(hash32, value.parentHash) &&
    matches(hash32, value.parentBeaconBlockRoot) &&
    matches(address, value.miner) &&
    matches(hash32, value.prevRandao) &&
    matches(quantity, value.gasLimit) &&
    matches(quantity, value.timestamp) &&
    matches(hexBytes, value.extraData) &&
    matches(quantity, value.baseFeePerGas) &&
    matches(quantity, value.gasUsed) &&
    matches(hash32, value.receiptsRoot) &&
    matches(bloom, value.logsBloom) &&
    matches(hash32, value.stateRoot) &&
    matches(hash32, value.flashblockHash) &&
    matches(hash32, value.withdrawalsRoot) &&
    (value.blobGasUsed === null || matches(quantity, value.blobGasUsed)) &&
    Array.isArray(value.withdrawals) &&
    optional(hash32, value.hash) &&
    optional(quantity, value.timestampMs) &&
    optional(hash32, value.transactionsRoot) &&
    optional(quantity, value.size) &&
    optional(quantity, value.excessBlobGas) &&
    optional(hash32, value.requestsHash)
  ))
    return false;
  for (const withdrawal of value.withdrawals as unknown[]) if (!isWithdrawal(withdrawal)) return false;
  return true;
}

/** A transaction of a block record: exactly `{hash, raw}` (the schema's strict object would drop other keys). */
function isTransaction(value: unknown): boolean {
  if (!isObject(value) || !keysInOrder(value, transactionOrder) || !matches(hash32, value.hash) || !matches(hexBytes, value.raw))
    return false;
  let keys = 0;
  for (const key in value) if (Object.hasOwn(value, key)) keys++;
  return keys === 2;
}

/**
 * blockRecordSchema (a flashlog.blocks value), checking `transactions` from `firstChecked` on: the
 * ones before it are known to the caller (the block the view holds, compared string for string).
 */
export function isBlockRecordValue(value: unknown, firstChecked = 0): boolean {
  if (!isObject(value)) return false;
  if (!(
    value.v === 1 &&
    matches(quantity, value.blockNumber) &&
    count(value.index) &&
    matches(payloadId, value.payloadId) &&
    count(value.firstNew) &&
    isHeader(value.header) &&
    Array.isArray(value.transactions) &&
    (value.executor === null || value.executor === 'local' || value.executor === 'metadata' || value.executor === 'node')
  ))
    return false;
  const transactions = value.transactions as unknown[];
  for (let i = firstChecked; i < transactions.length; i++) if (!isTransaction(transactions[i])) return false;
  if (value.receipts !== null) {
    if (!Array.isArray(value.receipts)) return false;
    for (const receipt of value.receipts) if (!isReceipt(receipt)) return false;
  }
  if (value.stateDiff !== null) {
    if (!isObject(value.stateDiff)) return false;
    for (const account in value.stateDiff) if (!address.test(account) || !isAccountDiff(value.stateDiff[account])) return false;
  }
  return true;
}
