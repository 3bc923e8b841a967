import { numberToHex } from 'viem';
import { pendingAccount, type PendingBlock, type ViewState } from '../view/state.ts';
import { diffAsOverrides, type StateOverrides } from '../schemas/state-overrides.ts';
import type { AccountDiff } from '../schemas/records.ts';
import type { BlockParam } from './params.ts';

/**
 * With `pending` and no pre-confirmed block the gateway answers as `latest` (Base's behaviour):
 * the call goes upstream with the tag replaced at `position`.
 */
export function asLatest(params: readonly unknown[], position: number): unknown[] {
  const copy = [...params];
  copy[position] = 'latest';
  return copy;
}

/** The canonical block under the pending blocks: where point reads fall back to. */
export function canonicalBase(state: ViewState): string {
  const earliest = state.blocks[0];
  if (earliest) return numberToHex(earliest.number - 1n);
  return state.canonical >= 0n ? numberToHex(state.canonical) : 'latest';
}

export function pendingBlockOf(state: ViewState, param: BlockParam): PendingBlock | undefined {
  if (param.kind === 'tag' && param.tag === 'pending') return state.blocks[state.blocks.length - 1];
  return undefined;
}

/**
 * The pre-confirmed state as state overrides over the canonical base block: every account any
 * pending block touched, at its newest pending value (Base's node lays the same map under
 * eth_call, eth_estimateGas and eth_simulateV1 with `pending`). Empty when no block carries a diff.
 */
export function pendingOverrides(state: ViewState): StateOverrides {
  let overrides = overridesByState.get(state);
  if (!overrides) overridesByState.set(state, (overrides = buildPendingOverrides(state)));
  return overrides;
}

/** A view state never changes (the reducer makes new ones): its overrides are computed once. */
const overridesByState = new WeakMap<ViewState, StateOverrides>();

function buildPendingOverrides(state: ViewState): StateOverrides {
  const touched = new Set<string>();
  for (const block of state.blocks) for (const account of Object.keys(block.stateDiff ?? {})) touched.add(account);
  const merged: Record<string, AccountDiff> = {};
  for (const account of touched) merged[account] = pendingAccount(state, account)!;
  return diffAsOverrides(merged);
}
