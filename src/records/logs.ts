import { z } from 'zod';
import { address, hash32, hexBytes, hexPatterns, quantity } from '../schemas/hex.ts';
import { topics, type TopicRecord } from './topics.ts';
import { count, everyMatches, isObject, keysInOrder, matches, optional, order, type Value } from './fast-check.ts';

/** A log as eth_getLogs returns it, with blockTimestamp; blockHash is 32 zero bytes while pre-confirmed. */
export const rpcLogSchema = z.looseObject({
  address,
  topics: z.array(hash32),
  data: hexBytes,
  blockNumber: quantity,
  blockHash: hash32,
  blockTimestamp: quantity,
  /** The block's time in milliseconds, where the chain has it (Base since Denim). */
  blockTimestampMs: quantity.optional(),
  transactionHash: hash32,
  transactionIndex: quantity,
  logIndex: quantity,
  removed: z.boolean(),
});
export type RpcLog = z.output<typeof rpcLogSchema>;

/** flashlog.logs: one log per record. Key: the emitting address. */
export const logRecordSchema = rpcLogSchema.extend({
  v: z.literal(1),
  /** The flashblock index that produced (or, when removed, withdrew) the log. */
  index: z.number().int().nonnegative(),
});
export type LogRecordValue = z.output<typeof logRecordSchema>;

const logOrder = order(rpcLogSchema);

/** rpcLogSchema; `ordered`: and its keys in the schema's order (for a log the view keeps). */
export function isRpcLog(value: unknown, ordered = true): boolean {
  if (!isObject(value) || (ordered && !keysInOrder(value, logOrder))) return false;
  return (
    matches(hexPatterns.address, value.address) &&
    everyMatches(hexPatterns.hash32, value.topics) &&
    matches(hexPatterns.hexBytes, value.data) &&
    matches(hexPatterns.quantity, value.blockNumber) &&
    matches(hexPatterns.hash32, value.blockHash) &&
    matches(hexPatterns.quantity, value.blockTimestamp) &&
    optional(hexPatterns.quantity, value.blockTimestampMs) &&
    matches(hexPatterns.hash32, value.transactionHash) &&
    matches(hexPatterns.quantity, value.transactionIndex) &&
    matches(hexPatterns.quantity, value.logIndex) &&
    typeof value.removed === 'boolean'
  );
}

const inner = (pattern: RegExp): string => pattern.source.slice(1, -1);
const text = (pattern: RegExp): string => `"${inner(pattern)}"`;
const logFields = [
  `"address":${text(hexPatterns.address)}`,
  `"topics":\\[(?:${text(hexPatterns.hash32)}(?:,${text(hexPatterns.hash32)})*)?\\]`,
  `"data":${text(hexPatterns.hexBytes)}`,
  `"blockNumber":${text(hexPatterns.quantity)}`,
  `"blockHash":${text(hexPatterns.hash32)}`,
  `"blockTimestamp":${text(hexPatterns.quantity)}`,
  `"transactionHash":${text(hexPatterns.hash32)}`,
  `"transactionIndex":${text(hexPatterns.quantity)}`,
  `"logIndex":${text(hexPatterns.quantity)}`,
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

/** A flashlog.logs record, keyed by the emitting address (lower case). */
export function logRecord(value: LogRecordValue): TopicRecord {
  return { topic: topics.logs, key: value.address.toLowerCase(), value: JSON.stringify(value) };
}
