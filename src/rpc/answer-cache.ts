import { rawResult, type RawResult } from '../jsonrpc/protocol.ts';
import type { PendingBlock } from '../view/state.ts';
import { formatPendingBlock, type TransactionFormatter } from './format.ts';

/**
 * Pending answers that depend on nothing but the view's version, kept serialized: the pending
 * block (`eth_getBlockByNumber('pending', false|true)`) is formatted and stringified once per held
 * block object, and every later read of it writes the same bytes (protocol.ts's `RawResult`, the
 * request id written around them).
 *
 * It is an invariant that a view state never changes (the reducer makes new states and new block
 * objects for every flashblock, sealed block or reorg), so a block object is a version: a new
 * step of the pending block is a new object and misses the cache, and entries of blocks no state
 * holds any more are collected with them (a WeakMap, nothing to invalidate by hand).
 */
interface Kept {
  readonly formatter: TransactionFormatter;
  /** By `full`: index 0 the hashes-only block, 1 the full one. */
  readonly texts: [Promise<RawResult> | undefined, Promise<RawResult> | undefined];
}

const byBlock = new WeakMap<PendingBlock, Kept>();

/**
 * `formatPendingBlock(block, full, formatter)` serialized, once per block object and formatter.
 * @example return pendingBlockAnswer(newestHeld(state)!, false, ctx.formatter); // the same bytes until the view changes
 */
export function pendingBlockAnswer(block: PendingBlock, full: boolean, formatter: TransactionFormatter): Promise<RawResult> {
  let kept = byBlock.get(block);
  // Another gateway in the same process (tests) formats with its own formatter: it keeps its own entry.
  if (kept?.formatter !== formatter) byBlock.set(block, (kept = { formatter, texts: [undefined, undefined] }));
  const slot = full ? 1 : 0;
  let text = kept.texts[slot];
  if (!text) {
    const texts = kept.texts;
    text = texts[slot] = formatPendingBlock(block, full, formatter).then((object) => rawResult(JSON.stringify(object)));
    // A failed format (a signature that does not recover) is not kept: the next read tries again.
    text.catch(() => texts[slot] === text && (texts[slot] = undefined));
  }
  return text;
}

/** Filters kept per block: the few a dapp's clients repeat, not every address anyone asked for. */
const keptFilters = 64;
const logsByBlock = new WeakMap<PendingBlock, Map<string, RawResult>>();

/**
 * The serialized logs of one held block under one filter (`eth_getLogs` of exactly that block,
 * `{fromBlock: 'pending', toBlock: 'pending'}`), once per block object and filter text: `logs`
 * computes them on a miss. Like the pending block, they depend on nothing but that block object.
 * @example return pendingLogsAnswer(top, JSON.stringify(given[0]), () => matching(top, filter));
 */
export function pendingLogsAnswer(block: PendingBlock, filterText: string, logs: () => readonly unknown[]): RawResult {
  let kept = logsByBlock.get(block);
  if (!kept) logsByBlock.set(block, (kept = new Map()));
  let answer = kept.get(filterText);
  if (!answer) {
    answer = rawResult(JSON.stringify(logs()));
    if (kept.size >= keptFilters) kept.clear();
    kept.set(filterText, answer);
  }
  return answer;
}
