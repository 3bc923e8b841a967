import { numberToHex } from 'viem';
import type { PendingBlock, ViewState } from '../../view/state.ts';
import type { BlockParam } from '../params.ts';

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
