import type { RpcLog } from '../records/logs.ts';
import type { ReconcileState } from './reconcile.ts';

/**
 * The rules for following canonical heads, apart from the polling that applies them
 * (src/source/canonical-heads.ts): which blocks a poll reads, when a canonical block that only extends its
 * pre-confirmation is looked at again later, what an execution adds to the reconciliation state,
 * and when the upstream counts as down or back. Pure: no clock, no I/O (`now` is given).
 */

/** At most this many canonical blocks are read in one poll (the newest ones, after an outage). */
export const CATCH_UP_WINDOW = 16n;

/**
 * The canonical blocks one poll reads: from the block after the last one reconciled (or the head
 * on the first poll) up to the head, never more than the newest `CATCH_UP_WINDOW + 1`.
 * It is an invariant that no block between `last` and the head is skipped unless the gap exceeds the window.
 */
export function catchUpRange(last: bigint | null, head: bigint, window = CATCH_UP_WINDOW): { readonly from: bigint; readonly to: bigint } {
  let from = last === null ? head : last + 1n;
  if (head - from > window) from = head - window;
  return { from, to: head };
}

/**
 * Whether a canonical block whose transactions differ from the pre-confirmed ones should wait for
 * the next poll: yes while the pre-confirmed list is a strict prefix of the canonical one (its last
 * flashblocks are probably still on the way) and `graceMs` has not passed since it was first seen so.
 */
export function waitForPrefix(
  pending: readonly string[],
  canonical: readonly string[],
  firstSeenMs: number,
  nowMs: number,
  graceMs: number,
): boolean {
  const isPrefix = pending.length < canonical.length && pending.every((hash, i) => hash === canonical[i]);
  return isPrefix && nowMs - firstSeenMs < graceMs;
}

/** The state with an executed block's logs added to its pre-confirmation (unchanged when the block is not held). */
export function withExecutedLogs(state: ReconcileState, blockNumber: bigint, logs: readonly RpcLog[]): ReconcileState {
  if (logs.length === 0) return state;
  const known = state.pending.get(blockNumber);
  if (!known) return state;
  const pending = new Map(state.pending);
  pending.set(blockNumber, { ...known, logs: [...known.logs, ...logs] });
  return { ...state, pending };
}

/** Whether the upstream is down, and since when. */
export type Outage = { readonly since: number } | null;

/**
 * One poll's outcome applied to the outage: `down` the first time a poll fails (log once),
 * `up` (with how long it was down) the first time one succeeds again, else nothing to say.
 */
export function outageStep(
  outage: Outage,
  ok: boolean,
  nowMs: number,
): { readonly outage: Outage; readonly change: { readonly type: 'down' } | { readonly type: 'up'; readonly downMs: number } | null } {
  if (!ok) return outage ? { outage, change: null } : { outage: { since: nowMs }, change: { type: 'down' } };
  return outage ? { outage: null, change: { type: 'up', downMs: nowMs - outage.since } } : { outage: null, change: null };
}
