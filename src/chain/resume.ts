import type { LoggedBlock } from '../log/log-tail.ts';

export type { LoggedBlock };

/**
 * Where ingest resumes, as pure rules: a restarted writer starts from the last block the log
 * holds, not from the node's head, and what it cannot fill is said in the log (a `gap` record),
 * never left as silence.
 *
 *   the log's flashlog.blocks tail --resumeCandidates--> the newest blocks it holds, newest first
 *   the last block published + the next block seen --fillPlan--> blocks to read from the node
 *                                                             + the range given up (a gap), if any
 *
 * It is an invariant that fillPlan's backfill and gap together cover every number strictly
 * between `last` and `next`, once, the gap below the backfill: the newest blocks are the ones read.
 */

/** How many of the log's newest blocks a restarted writer may find its place among (a reorg while it was down). */
export const resumeDepth = 64;

/**
 * The newest blocks the log holds, one per number, newest first, at most `max`: at a number held
 * twice the later record wins (a reorg's replacement is written after the block it replaced).
 * @example resumeCandidates([{ number: 7n, hash: a }, { number: 8n, hash: b }, { number: 8n, hash: c }], 4) // [{8n, c}, {7n, a}]
 */
export function resumeCandidates(records: readonly LoggedBlock[], max: number): LoggedBlock[] {
  const byNumber = new Map<bigint, LoggedBlock>();
  for (const record of records) byNumber.set(record.number, record);
  return [...byNumber.values()].sort((a, b) => (a.number > b.number ? -1 : a.number < b.number ? 1 : 0)).slice(0, Math.max(0, max));
}

/** An inclusive range of block numbers. */
export interface BlockRange {
  readonly from: bigint;
  readonly to: bigint;
}

/** Why blocks are missing from the log for good. */
export type GapReason =
  /** More blocks were missing than --max-backfill-blocks allows to read: the oldest are given up. */
  | 'beyond_max_backfill'
  /** The node could not give them (it no longer has them, or kept failing). */
  | 'not_on_node';

export interface FillPlan {
  /** The blocks to read from the node, oldest first; null when none is missing or none may be read. */
  readonly backfill: BlockRange | null;
  /** The blocks given up, below the backfill; null when every missing block is read. */
  readonly gap: BlockRange | null;
}

/**
 * What to do about the blocks between `last` (the newest block published, or the log's last block
 * after a restart; null when the log holds none) and `next` (the block about to be published):
 * read the newest `maxBackfill` of them from the node, give up the rest as a gap.
 * @example fillPlan(100n, 105n, 600) // { backfill: { from: 101n, to: 104n }, gap: null }
 * @example fillPlan(100n, 1000n, 600) // { backfill: { from: 400n, to: 999n }, gap: { from: 101n, to: 399n } }
 */
export function fillPlan(last: bigint | null, next: bigint, maxBackfill: number): FillPlan {
  if (last === null || next <= last + 1n) return { backfill: null, gap: null };
  const from = last + 1n;
  const to = next - 1n;
  const allowed = BigInt(Math.max(0, Math.floor(maxBackfill)));
  if (to - from + 1n <= allowed) return { backfill: { from, to }, gap: null };
  if (allowed === 0n) return { backfill: null, gap: { from, to } };
  return { backfill: { from: to - allowed + 1n, to }, gap: { from, to: to - allowed } };
}

/**
 * The gap left when a walk back by parent hash from a head gave up before reaching the blocks
 * held: every number above the newest block held (`tip`) and below the oldest block walked
 * (`walkedFrom`); null when they meet.
 * @example walkGap(100n, 701n) // { from: 101n, to: 700n }
 */
export function walkGap(tip: bigint | null, walkedFrom: bigint): BlockRange | null {
  if (tip === null || walkedFrom <= tip + 1n) return null;
  return { from: tip + 1n, to: walkedFrom - 1n };
}
