import { bytesToHex, type Hex } from 'viem';
import { rulesAt, type RollupConfig } from '../op/rollup-config.ts';
import { nextTimestamp } from './schedule.ts';
import type { SingularBatch } from './singular-batch.ts';

/**
 * Batch validation (specs/protocol/derivation.md "Batch Queue"; holocene/derivation.md), for
 * singular batches so far: is this batch the next L2 block on top of the safe head?
 *
 * | verdict     | meaning |
 * | ----------- | ------- |
 * | `accept`    | it is the next block |
 * | `drop`      | it never will be (without an L1 reorg) |
 * | `undecided` | more L1 blocks are needed to tell |
 * | `future`    | (before Holocene) a later block: keep it for later |
 * | `past`      | (Holocene) an older block: skip it without dropping its channel |
 *
 * Holocene (at the batch's L1 inclusion time) turns a future batch into a drop and a past batch
 * into `past`. Span batches are not checked here yet.
 */
export type BatchVerdict = 'accept' | 'drop' | 'undecided' | 'future' | 'past';

export interface BlockRef {
  readonly hash: Hex;
  readonly number: bigint;
  readonly timestamp: bigint;
}
export type L2SafeHead = BlockRef;

export interface BatchValidityRules {
  readonly rollup: RollupConfig;
  /** The rollup config's `seq_window_size` (L1 blocks). */
  readonly seqWindowSize: bigint;
  /** The rollup config's `max_sequencer_drift` (seconds), used before Fjord; Fjord fixes it at 1800. */
  readonly maxSequencerDrift: bigint;
}

/** What a batch (singular or span) is checked against, and the batch. */
export interface BatchCheckOf<Batch, SafeHead> {
  /** The L1 blocks from the safe head's L1 origin (the current epoch) on. */
  readonly l1Blocks: readonly BlockRef[];
  readonly safeHead: SafeHead;
  readonly batch: Batch;
  /** The L1 block whose data held the batch. */
  readonly inclusion: BlockRef;
}
export type BatchCheck = BatchCheckOf<SingularBatch, L2SafeHead>;

/** A batch after the next L2 block's time: dropped from Holocene on; before, kept for later (`future`). */
export function futureBatch(holocene: boolean, timestamp: bigint, next: bigint): { verdict: BatchVerdict; reason: string } {
  return holocene
    ? { verdict: 'drop', reason: `future batch (timestamp ${timestamp}, next ${next})` }
    : { verdict: 'future', reason: `timestamp ${timestamp} is after the next ${next}` };
}

/** A batch before the next L2 block's time: `past` from Holocene on (skipped, the next is read); before, dropped. */
export function pastBatch(
  holocene: boolean,
  timestamp: bigint,
  next: bigint,
  what = 'timestamp',
): { verdict: BatchVerdict; reason: string } {
  return holocene
    ? { verdict: 'past', reason: `${what} ${timestamp} is before the next ${next}` }
    : { verdict: 'drop', reason: `past batch (${what} ${timestamp}, next ${next})` };
}

/** Fjord's fixed max sequencer drift (seconds). */
export const maxSequencerDriftFjord = 1800n;
export const depositType = 0x7e;
const setCodeType = 0x04;
/**
 * Lagoon's post-exec type (specs lagoon/post-exec.md): a batch may carry it from Lagoon on, as
 * op-node's singular-batch gate allows it once SDM (Lagoon) is active; the block rules (last, at
 * most one, anchored) are the executor's (lagoon/derivation.md § Batch Acceptance: the batch
 * format "has no notion of block validity"). The Batch Queue rules' Lagoon amendment is not
 * written in the specs yet (same section): UNCONFIRMED beyond op-node's gate.
 */
const postExecType = 0x7d;

/**
 * The verdict on a singular batch, and why.
 *
 * @example checkSingularBatch({ l1Blocks, safeHead, batch, inclusion }, rules).verdict // 'accept'
 */
export function checkSingularBatch(check: BatchCheck, rules: BatchValidityRules): { verdict: BatchVerdict; reason: string } {
  const { l1Blocks, safeHead, batch, inclusion } = check;
  const { rollup } = rules;
  const verdict = (value: BatchVerdict, reason: string) => ({ verdict: value, reason });
  const epoch = l1Blocks[0];
  if (!epoch) return verdict('undecided', 'no L1 blocks to check against');
  const holocene = rulesAt(rollup, inclusion.timestamp).active('holocene');
  // Base's Denim: the next block's time is the schedule's (several blocks share a second).
  const next = nextTimestamp(rollup, safeHead);
  if (batch.timestamp > next) return futureBatch(holocene, batch.timestamp, next);
  if (batch.timestamp < next) return pastBatch(holocene, batch.timestamp, next);
  if (batch.parentHash.toLowerCase() !== safeHead.hash.toLowerCase())
    return verdict('drop', `parent hash ${batch.parentHash} is not the safe head ${safeHead.hash}`);
  if (batch.epochNumber + rules.seqWindowSize < inclusion.number)
    return verdict('drop', `included at L1 ${inclusion.number}, past epoch ${batch.epochNumber}'s sequencing window`);

  let origin = epoch;
  if (batch.epochNumber < epoch.number) return verdict('drop', `epoch ${batch.epochNumber} is older than the current ${epoch.number}`);
  if (batch.epochNumber === epoch.number + 1n) {
    if (!l1Blocks[1]) return verdict('undecided', 'the batch advances the epoch; the next L1 block is not known yet');
    origin = l1Blocks[1];
  } else if (batch.epochNumber !== epoch.number)
    return verdict('drop', `epoch ${batch.epochNumber} is more than one ahead of the current ${epoch.number}`);
  if (batch.epochHash.toLowerCase() !== origin.hash.toLowerCase())
    return verdict('drop', `epoch hash ${batch.epochHash} is not L1 block ${origin.number}'s ${origin.hash}`);
  if (batch.timestamp < origin.timestamp)
    return verdict('drop', `timestamp ${batch.timestamp} is before its L1 origin's ${origin.timestamp}`);

  const l2 = rulesAt(rollup, batch.timestamp, safeHead.timestamp);
  // op-node's activation test needs a whole block time since genesis.
  const activation = (fork: 'jovian' | 'karst') => l2.activationBlock(fork) && batch.timestamp >= BigInt(rollup.block_time);
  if ((activation('jovian') || activation('karst')) && batch.transactions.length > 0)
    return verdict('drop', 'user transactions in a fork activation block');

  const drift = rulesAt(rollup, origin.timestamp).active('fjord') ? maxSequencerDriftFjord : rules.maxSequencerDrift;
  if (batch.timestamp > origin.timestamp + drift) {
    if (batch.transactions.length > 0)
      return verdict('drop', `timestamp ${batch.timestamp} exceeds the sequencer drift (${origin.timestamp} + ${drift}) with transactions`);
    if (epoch.number === origin.number) {
      const nextOrigin = l1Blocks[1];
      if (!nextOrigin) return verdict('undecided', 'an empty batch past the sequencer drift; the next L1 block is not known yet');
      if (batch.timestamp >= nextOrigin.timestamp)
        return verdict('drop', 'an empty batch past the sequencer drift that could have adopted the next L1 origin');
    }
  }

  const refused = sequencerTransactionProblem(batch.transactions, l2.active('isthmus'), l2.active('lagoon'));
  if (refused) return verdict('drop', refused);
  return verdict('accept', 'the next block');
}

/**
 * Why a batch's transaction list cannot be a sequencer's, or undefined: an empty transaction, a
 * deposit, SetCode before Isthmus, a post-exec transaction before Lagoon.
 */
export function sequencerTransactionProblem(transactions: readonly Uint8Array[], isthmus: boolean, lagoon = false): string | undefined {
  for (const [index, tx] of transactions.entries()) {
    if (tx.length === 0) return `transaction ${index} is empty`;
    const type = tx[0];
    if (type === depositType) return `transaction ${index} is a deposit`;
    if (type === setCodeType && !isthmus) return `transaction ${index} is SetCode before Isthmus`;
    if (type === postExecType && !lagoon)
      return `transaction ${index} is a PostExec transaction (${bytesToHex(tx.subarray(0, 1))}) before Lagoon`;
  }
  return undefined;
}
