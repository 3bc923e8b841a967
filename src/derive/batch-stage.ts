import type { Hex } from 'viem';
import { rulesAt, type RollupConfig } from '../op/rollup-config.ts';
import { checkSingularBatch, type BatchValidityRules, type BatchVerdict } from './batch-validity.ts';
import type { ChannelBatch } from './channel.ts';
import type { DerivationConfig } from './derivation-config.ts';
import type { L1BlockHeader } from './l1-source.ts';
import type { SystemConfig } from './system-config.ts';
import { isDenimBlock, l2ScheduleOf, nextTimestamp, sameSecondLookback } from './schedule.ts';
import { checkSpanBatch, type SafeBlocks } from './span-batch-validity.ts';

/**
 * The batch stage (specs/protocol/derivation.md "Batch Queue", holocene/derivation.md "Batch
 * Stage"): which queued batch makes the next L2 block, or, when none can and the current epoch's
 * sequencing window has expired, an empty batch (or a move to the next epoch), as op-node's
 * `deriveNextBatch` decides.
 *
 * | verdict   | here |
 * | --------- | ---- |
 * | accept    | the batch's blocks after the safe head are the next blocks |
 * | drop      | removed; from Holocene the rest of its channel goes with it |
 * | past      | removed (Holocene: an older block, its channel kept) |
 * | undecided | stop: more L1 is needed |
 * | future    | (before Holocene) kept for later |
 */
export interface DeriveSafeHead {
  readonly hash: Hex;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly l1Origin: { readonly hash: Hex; readonly number: bigint };
  readonly sequenceNumber: bigint;
  readonly systemConfig: SystemConfig;
  /** Its transactions, deposits first (a span batch that starts at it is checked against them). */
  readonly transactions: readonly Uint8Array[];
}

/** The state the batch stage builds on: the last derived block. */
export interface SafeState extends DeriveSafeHead {
  /** The current epoch: the safe head's L1 origin, or the next one once empty batches moved past it. */
  readonly epochNumber: bigint;
}

export interface QueuedBatch {
  readonly batch: ChannelBatch;
  /** The L1 block whose data held the batch. */
  readonly inclusion: L1BlockHeader;
  readonly channelId: Hex;
  /** Why it waits, once found undecided. */
  reason?: string;
}

export interface BatchBlockOut {
  readonly timestamp: bigint;
  readonly epochNumber: bigint;
  readonly transactions: readonly Uint8Array[];
}

export type BatchStep =
  | { readonly type: 'blocks'; readonly blocks: readonly BatchBlockOut[]; readonly inclusion?: L1BlockHeader }
  /** The sequencing window moved the epoch on: the next block is in the next L1 origin. */
  | { readonly type: 'advance' };

export interface BatchStageContext {
  readonly safe: SafeState;
  /** The L1 blocks from the current epoch up to `current`, oldest first. */
  readonly l1Blocks: readonly L1BlockHeader[];
  /** The L1 block derivation has read up to. */
  readonly current: L1BlockHeader;
  readonly rollup: RollupConfig;
  readonly config: DerivationConfig;
  /** Derived (or agreed) L2 blocks by number, for a span batch that overlaps them. */
  readonly safeBlocks: SafeBlocks;
  readonly event: (text: string) => void;
}

/** The next step of the batch stage, or undefined when it needs more L1 data. */
export function nextBatch(queue: QueuedBatch[], context: BatchStageContext): BatchStep | undefined {
  const { safe, l1Blocks, current, rollup, config, event } = context;
  const rules: BatchValidityRules = { rollup, seqWindowSize: config.seqWindowSize, maxSequencerDrift: config.maxSequencerDrift };
  const refs = l1Blocks.map(({ hash, number, timestamp }) => ({ hash, number, timestamp }));
  let index = 0;
  while (index < queue.length) {
    const entry = queue[index]!;
    const { verdict, reason } = judge(entry, refs, context, rules);
    const where = `batch from channel ${entry.channelId} (L1 block ${entry.inclusion.number})`;
    if (verdict === 'accept') {
      queue.splice(index, 1);
      const { blocks, cut } = blocksOf(entry.batch, safe, rollup);
      if (cut) {
        // base/base #4583: a span's tail past Denim's activation is flushed with the rest of its channel.
        event(`${where}: ${cut} blocks past Denim's activation dropped with the rest of the channel`);
        flushChannel(queue, index, entry.channelId);
      }
      return { type: 'blocks', blocks, inclusion: entry.inclusion };
    }
    if (verdict === 'undecided') {
      entry.reason = reason;
      return undefined;
    }
    if (verdict === 'future') {
      index++;
      continue;
    }
    queue.splice(index, 1);
    if (verdict === 'drop') {
      event(`${where} dropped: ${reason}`);
      // Holocene: an invalid batch flushes the rest of its channel.
      if (rulesAt(rollup, entry.inclusion.timestamp).active('holocene')) flushChannel(queue, index, entry.channelId);
    }
  }
  return emptyBatch(context);
}

function judge(
  entry: QueuedBatch,
  l1Blocks: readonly { hash: Hex; number: bigint; timestamp: bigint }[],
  context: BatchStageContext,
  rules: BatchValidityRules,
): { verdict: BatchVerdict; reason: string } {
  const { safe } = context;
  const { batch, inclusion } = entry;
  const inclusionRef = { hash: inclusion.hash, number: inclusion.number, timestamp: inclusion.timestamp };
  if (batch.type === 'singular') {
    const stale = staleSameSecond(batch.batch, context);
    if (stale) return stale;
    return checkSingularBatch(
      {
        l1Blocks,
        safeHead: { hash: safe.hash, number: safe.number, timestamp: safe.timestamp },
        batch: batch.batch,
        inclusion: inclusionRef,
      },
      rules,
    );
  }
  if (!batch.batch) return { verdict: 'drop', reason: batch.dropped ?? 'a span batch whose blocks could not be rebuilt' };
  if (isDenimBlock(context.rollup, safe.number + 1n)) {
    // A span wholly before the next block is an old one (Holocene's past: its channel kept).
    const last = batch.batch.blocks.at(-1)!;
    if (last.timestamp < nextTimestamp(context.rollup, safe))
      return { verdict: 'past', reason: `a span batch ending at ${last.timestamp}, before the next block` };
    return { verdict: 'drop', reason: `a span batch for L2 block ${safe.number + 1n}: from Denim on only singular batches derive` };
  }
  return checkSpanBatch(
    {
      l1Blocks,
      safeHead: { hash: safe.hash, number: safe.number, timestamp: safe.timestamp, l1OriginNumber: safe.l1Origin.number },
      batch: batch.batch,
      inclusion: inclusionRef,
    },
    rules,
    context.safeBlocks,
  );
}

/**
 * Base's Denim (base/base #4783): several blocks share a second, so a batch whose timestamp is the
 * next block's may have been built on an earlier block of that second: a batch the chain already
 * holds, left in a channel the derivation restarted in. When its parent is one of the safe blocks
 * of that second it is skipped alone (`past`: its channel kept); any other parent is the usual
 * parent mismatch. A safe block that is not known leaves it undecided.
 */
function staleSameSecond(
  batch: { readonly timestamp: bigint; readonly parentHash: Hex },
  context: BatchStageContext,
): { verdict: BatchVerdict; reason: string } | undefined {
  const { safe, rollup } = context;
  if (batch.parentHash.toLowerCase() === safe.hash.toLowerCase()) return undefined;
  if (!isDenimBlock(rollup, safe.number + 1n)) return undefined;
  const schedule = l2ScheduleOf(rollup);
  if (batch.timestamp !== schedule.seconds(safe.number + 1n)) return undefined;
  for (let number = safe.number - 1n; number >= 0n && number >= safe.number - sameSecondLookback; number--) {
    if (schedule.seconds(number + 1n) !== batch.timestamp) break;
    const ancestor = context.safeBlocks(number);
    if (!ancestor) return { verdict: 'undecided', reason: `same-second batch: safe L2 block ${number} is not known` };
    if (ancestor.ref.hash.toLowerCase() === batch.parentHash.toLowerCase())
      return { verdict: 'past', reason: `a batch for block ${number + 1n} (same second ${batch.timestamp}), already safe` };
  }
  return undefined;
}

/**
 * The blocks of an accepted batch after the safe head; of a span batch only those before Denim's
 * activation (`cut`: how many after it were dropped).
 */
function blocksOf(batch: ChannelBatch, safe: SafeState, rollup: RollupConfig): { blocks: BatchBlockOut[]; cut: number } {
  if (batch.type === 'singular')
    return {
      blocks: [{ timestamp: batch.batch.timestamp, epochNumber: batch.batch.epochNumber, transactions: batch.batch.transactions }],
      cut: 0,
    };
  const after = batch.batch!.blocks.filter((block) => block.timestamp > safe.timestamp);
  const kept = after.filter((_, i) => !isDenimBlock(rollup, safe.number + 1n + BigInt(i)));
  return { blocks: kept, cut: after.length - kept.length };
}

/** Removes the batches of channel `channelId` from `index` on. */
function flushChannel(queue: QueuedBatch[], index: number, channelId: Hex): void {
  for (let i = queue.length - 1; i >= index; i--) if (queue[i]!.channelId === channelId) queue.splice(i, 1);
}

/**
 * op-node's empty batches: once the current epoch's sequencing window has expired at the L1
 * block read up to (and its data gave no batch), L2 blocks without transactions fill the epoch up
 * to the next L1 origin's time, then the epoch moves on. The first block of an epoch is always made.
 */
function emptyBatch(context: BatchStageContext): BatchStep | undefined {
  const { safe, l1Blocks, current, rollup, config } = context;
  const epoch = l1Blocks[0];
  if (!epoch || epoch.number + config.seqWindowSize > current.number) return undefined;
  const nextEpoch = l1Blocks[1];
  if (!nextEpoch) return undefined;
  const timestamp = nextTimestamp(rollup, safe);
  const firstOfEpoch = epoch.number === safe.l1Origin.number + 1n;
  if (timestamp < nextEpoch.timestamp || firstOfEpoch)
    return { type: 'blocks', blocks: [{ timestamp, epochNumber: epoch.number, transactions: [] }] };
  return { type: 'advance' };
}
