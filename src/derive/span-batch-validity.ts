import { slice, type Hex } from 'viem';
import { rulesAt } from '../op/rollup-config.ts';
import {
  depositType,
  futureBatch,
  maxSequencerDriftFjord,
  pastBatch,
  sequencerTransactionProblem,
  type BatchCheckOf,
  type BatchValidityRules,
  type BatchVerdict,
} from './batch-validity.ts';
import type { SpanBatch } from './span-batch.ts';

/**
 * Span-batch validation (specs/protocol/delta/span-batches.md "Span batch validation"; Holocene's
 * future/past rules), with the verdicts of `checkSingularBatch`. A span batch that overlaps the
 * safe chain (starts at or before the safe head) is checked against the safe blocks `safeBlocks`
 * gives: the same non-deposit transactions and L1 origins. Without one it is `undecided`, as
 * op-node is when it cannot fetch them.
 */
export interface L2BlockRef {
  readonly hash: Hex;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly l1OriginNumber: bigint;
}

/** A safe L2 block: its reference and all its transactions (deposits first). */
export interface SafeBlock {
  readonly ref: L2BlockRef;
  readonly transactions: readonly Uint8Array[];
}
export type SafeBlocks = (number: bigint) => SafeBlock | undefined;

export type SpanBatchCheck = BatchCheckOf<SpanBatch, L2BlockRef>;

const check20 = (hash: Hex) => slice(hash, 0, 20).toLowerCase();

/**
 * The verdict on a span batch, and why.
 *
 * @example checkSpanBatch({ l1Blocks, safeHead, batch, inclusion }, rules).verdict // 'accept'
 */
export function checkSpanBatch(
  check: SpanBatchCheck,
  rules: BatchValidityRules,
  safeBlocks: SafeBlocks = () => undefined,
): { verdict: BatchVerdict; reason: string } {
  const prefix = checkPrefix(check, rules, safeBlocks);
  if (!prefix.parent) return prefix;
  const parent = prefix.parent;
  const { l1Blocks, safeHead, batch } = check;
  const { rollup } = rules;
  const verdict = (value: BatchVerdict, reason: string) => ({ verdict: value, reason });
  let originIndex = 0;
  let originAdvanced = batch.blocks[0]!.epochNumber === parent.l1OriginNumber + 1n;
  for (const [i, block] of batch.blocks.entries()) {
    const where = `block ${i} (timestamp ${block.timestamp})`;
    if (block.timestamp <= safeHead.timestamp) continue;
    if (block.epochNumber < safeHead.l1OriginNumber)
      return verdict('drop', `${where}: epoch ${block.epochNumber} is older than the safe head's ${safeHead.l1OriginNumber}`);
    const found = l1Blocks.findIndex((l1, j) => j >= originIndex && l1.number === block.epochNumber);
    if (found < 0) return verdict('drop', `${where}: its L1 origin ${block.epochNumber} is not among the L1 blocks`);
    originIndex = found;
    const origin = l1Blocks[found]!;
    if (i > 0) originAdvanced = block.epochNumber > batch.blocks[i - 1]!.epochNumber;
    if (block.timestamp < origin.timestamp) return verdict('drop', `${where}: before its L1 origin's ${origin.timestamp}`);
    const drift = rulesAt(rollup, origin.timestamp).active('fjord') ? maxSequencerDriftFjord : rules.maxSequencerDrift;
    if (block.timestamp > origin.timestamp + drift) {
      if (block.transactions.length > 0) return verdict('drop', `${where}: exceeds the sequencer drift with transactions`);
      if (!originAdvanced) {
        const next = l1Blocks[originIndex + 1];
        if (!next) return verdict('undecided', `${where}: an empty block past the sequencer drift; the next L1 block is not known yet`);
        if (block.timestamp >= next.timestamp)
          return verdict('drop', `${where}: an empty block past the sequencer drift that could have adopted the next L1 origin`);
      }
    }
    const blockRules = rulesAt(rollup, block.timestamp);
    const refused = sequencerTransactionProblem(block.transactions, blockRules.active('isthmus'), blockRules.active('lagoon'));
    if (refused) return verdict('drop', `${where}: ${refused}`);
  }
  if (batch.blocks[0]!.timestamp <= safeHead.timestamp) {
    const overlap = checkOverlap(batch, parent, safeHead, safeBlocks);
    if (overlap) return overlap;
  }
  return verdict('accept', 'the next blocks');
}

/** The blocks a span batch shares with the safe chain must be the safe blocks: their non-deposit transactions and L1 origins. */
function checkOverlap(batch: SpanBatch, parent: L2BlockRef, safeHead: L2BlockRef, safeBlocks: SafeBlocks) {
  for (let i = 0; BigInt(i) < safeHead.number - parent.number; i++) {
    const number = parent.number + BigInt(i) + 1n;
    const safe = safeBlocks(number);
    if (!safe) return { verdict: 'undecided' as const, reason: `safe block ${number} is not known` };
    const userTransactions = safe.transactions.filter((tx) => tx[0] !== depositType);
    const batchTransactions = batch.blocks[i]!.transactions;
    const drop = (reason: string) => ({ verdict: 'drop' as const, reason: `block ${i} overlaps safe block ${number}: ${reason}` });
    if (userTransactions.length !== batchTransactions.length)
      return drop(`${batchTransactions.length} transactions, the safe block has ${userTransactions.length}`);
    const differs = batchTransactions.findIndex((tx, j) => !bytesEqual(tx, userTransactions[j]!));
    if (differs >= 0) return drop(`transaction ${differs} differs`);
    if (safe.ref.l1OriginNumber !== batch.blocks[i]!.epochNumber)
      return drop(`L1 origin ${batch.blocks[i]!.epochNumber}, the safe block's is ${safe.ref.l1OriginNumber}`);
  }
  return undefined;
}

const bytesEqual = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

/** The checks on a span batch's first block and its ends; on success, the block it builds on. */
function checkPrefix(
  check: SpanBatchCheck,
  rules: BatchValidityRules,
  safeBlocks: SafeBlocks,
): { verdict: BatchVerdict; reason: string; parent?: L2BlockRef } {
  const { l1Blocks, safeHead, batch, inclusion } = check;
  const { rollup } = rules;
  const verdict = (value: BatchVerdict, reason: string) => ({ verdict: value, reason });
  const epoch = l1Blocks[0];
  if (!epoch) return verdict('undecided', 'no L1 blocks to check against');
  const first = batch.blocks[0]!;
  const last = batch.blocks.at(-1)!;
  let origin = epoch;
  if (first.epochNumber === epoch.number + 1n) {
    if (!l1Blocks[1]) return verdict('undecided', 'the batch advances the epoch; the next L1 block is not known yet');
    origin = l1Blocks[1];
  }
  if (!rulesAt(rollup, origin.timestamp).active('delta'))
    return verdict('drop', `a span batch on L1 origin ${origin.number}, before Delta`);
  const holocene = rulesAt(rollup, inclusion.timestamp).active('holocene');
  const next = safeHead.timestamp + BigInt(rollup.block_time);
  if (first.timestamp > next) return futureBatch(holocene, first.timestamp, next);
  if (last.timestamp < next) return pastBatch(holocene, last.timestamp, next, 'last timestamp');
  let parent = safeHead;
  if (first.timestamp < next) {
    if (first.timestamp > safeHead.timestamp) return verdict('drop', `timestamp ${first.timestamp} falls between safe blocks`);
    const behind = safeHead.timestamp - first.timestamp;
    if (behind % BigInt(rollup.block_time) !== 0n) return verdict('drop', `timestamp ${first.timestamp} is not on the block time`);
    const parentNumber = safeHead.number - behind / BigInt(rollup.block_time) - 1n;
    const safe = safeBlocks(parentNumber);
    if (!safe) return verdict('undecided', `the batch overlaps the safe chain; safe block ${parentNumber} is not known`);
    parent = safe.ref;
  }
  if (batch.parentCheck.toLowerCase() !== check20(parent.hash))
    return verdict('drop', `parent check ${batch.parentCheck} does not match block ${parent.number} ${parent.hash}`);
  if (first.epochNumber + rules.seqWindowSize < inclusion.number)
    return verdict('drop', `included at L1 ${inclusion.number}, past epoch ${first.epochNumber}'s sequencing window`);
  if (first.epochNumber > parent.l1OriginNumber + 1n)
    return verdict('drop', `starting epoch ${first.epochNumber} is more than one past its parent's ${parent.l1OriginNumber}`);
  const endOrigin = l1Blocks.find((l1) => l1.number === last.epochNumber);
  if (!endOrigin) return verdict('undecided', `its last L1 origin ${last.epochNumber} is not known yet`);
  if (batch.l1OriginCheck.toLowerCase() !== check20(endOrigin.hash))
    return verdict('drop', `L1 origin check ${batch.l1OriginCheck} does not match L1 block ${endOrigin.number} ${endOrigin.hash}`);
  if (first.epochNumber < parent.l1OriginNumber)
    return verdict('drop', `starting epoch ${first.epochNumber} is older than its parent's ${parent.l1OriginNumber}`);
  return { ...verdict('accept', 'prefix'), parent };
}
