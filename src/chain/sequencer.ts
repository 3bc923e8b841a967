import type { Flashblock } from '../schemas/flashblock.ts';
import { extendBlock, startBlock, type AssembledBlock } from './assemble.ts';

/**
 * Sequencing of flashblocks, as Base's node validates them
 * (base/base `crates/execution/flashblocks/src/validation.rs`):
 *
 *   same block, index + 1          -> next
 *   next block (or first seen), 0  -> new block
 *   same block, same or lower index -> duplicate, ignored
 *   same block, index skips ahead  -> gap: the block is dropped until the next index 0
 *   other block, index != 0        -> bad first index: that block is dropped
 *   first block seen, index != 0   -> joined mid-block: a feed joined (any fresh start) sends the
 *                                     block in progress from where it is; that block is dropped
 *
 * When the canonical head is known, a flashblock whose parent is neither canonical nor the block
 * being built is held, up to `aheadBlocks` blocks ahead, and released once its parent is canonical.
 *
 * A pure reducer: `step(state, input)` returns the next state and what happened, no I/O.
 */
export type SequencerInput =
  { readonly type: 'flashblock'; readonly flashblock: Flashblock } | { readonly type: 'canonical'; readonly blockNumber: bigint };

export type RejectReason = 'duplicate' | 'gap' | 'bad_first_index' | 'joined_mid_block' | 'dropped_block' | 'stale' | 'too_far_ahead';

export type SequencerEvent =
  | {
      readonly type: 'accepted';
      readonly kind: 'next' | 'new_block';
      readonly flashblock: Flashblock;
      readonly block: AssembledBlock;
      readonly skippedBlocks: bigint;
    }
  | { readonly type: 'rejected'; readonly reason: RejectReason; readonly flashblock: Flashblock; readonly detail: string }
  | { readonly type: 'buffered'; readonly flashblock: Flashblock };

export interface SequencerState {
  readonly current: AssembledBlock | null;
  /** A block being dropped until the next index 0. */
  readonly dropping: bigint | null;
  readonly canonical: bigint | null;
  /** Flashblocks waiting for their parent to become canonical, in arrival order. */
  readonly held: readonly Flashblock[];
  readonly aheadBlocks: number;
  /** The last block started, to report blocks missing from the log. */
  readonly lastStarted: bigint | null;
}

export const initialSequencerState = (aheadBlocks = 5): SequencerState => ({
  current: null,
  dropping: null,
  canonical: null,
  held: [],
  aheadBlocks,
  lastStarted: null,
});

export const blockNumberOf = (flashblock: Flashblock): bigint => BigInt(flashblock.metadata.block_number);

export function step(state: SequencerState, input: SequencerInput): { state: SequencerState; events: SequencerEvent[] } {
  if (input.type === 'canonical') {
    if (state.canonical !== null && input.blockNumber <= state.canonical) return { state, events: [] };
    let next: SequencerState = { ...state, canonical: input.blockNumber, held: [] };
    const events: SequencerEvent[] = [];
    for (const flashblock of state.held) {
      const result = step(next, { type: 'flashblock', flashblock });
      next = result.state;
      // A flashblock held again was already reported as buffered.
      events.push(...result.events.filter((event) => event.type !== 'buffered'));
    }
    return { state: next, events };
  }
  const flashblock = input.flashblock;
  const number = blockNumberOf(flashblock);
  const index = flashblock.index;
  const reject = (reason: RejectReason, detail: string, changes: Partial<SequencerState> = {}) => ({
    state: { ...state, ...changes },
    events: [{ type: 'rejected', reason, flashblock, detail } satisfies SequencerEvent],
  });

  if (state.canonical !== null && number <= state.canonical) {
    return reject('stale', `block ${number} is already canonical (head ${state.canonical})`);
  }
  const current = state.current;
  if (current && number === current.blockNumber) {
    if (index === current.index + 1) {
      const block = extendBlock(current, flashblock);
      return { state: { ...state, current: block }, events: [{ type: 'accepted', kind: 'next', flashblock, block, skippedBlocks: 0n }] };
    }
    if (index <= current.index) return reject('duplicate', `block ${number} index ${index} already seen (at ${current.index})`);
    return reject('gap', `block ${number} jumped from index ${current.index} to ${index}; dropping the block until the next index 0`, {
      current: null,
      dropping: number,
    });
  }
  if (state.dropping === number)
    return state.lastStarted === null
      ? reject('joined_mid_block', `block ${number} index ${index}: the block was joined mid-way`)
      : reject('dropped_block', `block ${number} index ${index} belongs to a dropped block`);
  if (state.held.some((held) => blockNumberOf(held) === number && held.index === index)) {
    return reject('duplicate', `block ${number} index ${index} is already held`);
  }
  const parentKnown =
    state.canonical === null ||
    number - 1n <= state.canonical ||
    (current !== null && current.blockNumber === number - 1n) ||
    state.held.some((held) => blockNumberOf(held) === number - 1n) ||
    state.held.some((held) => blockNumberOf(held) === number);
  if (!parentKnown) {
    const ahead = number - 1n - state.canonical!;
    if (ahead > BigInt(state.aheadBlocks)) {
      return reject(
        'too_far_ahead',
        `block ${number} is ${ahead} blocks ahead of canonical ${state.canonical} (limit ${state.aheadBlocks})`,
      );
    }
    return { state: { ...state, held: [...state.held, flashblock] }, events: [{ type: 'buffered', flashblock }] };
  }
  if (state.held.length > 0 && state.held.some((held) => blockNumberOf(held) <= number)) {
    // Keep arrival order behind held flashblocks of the same or earlier blocks.
    return { state: { ...state, held: [...state.held, flashblock] }, events: [{ type: 'buffered', flashblock }] };
  }
  if (index !== 0 && state.lastStarted === null && current === null) {
    return reject(
      'joined_mid_block',
      `joined the feed in block ${number} at index ${index} (its first flashblocks were sent before); starting with block ${number + 1n}`,
      { dropping: number },
    );
  }
  if (index !== 0) {
    return reject('bad_first_index', `block ${number} starts at index ${index}, not 0; dropping the block`, { dropping: number });
  }
  if (current && number < current.blockNumber) {
    return reject('stale', `block ${number} is older than the block being built (${current.blockNumber})`);
  }
  if (!flashblock.base) return reject('bad_first_index', `block ${number} index 0 has no base`, { dropping: number });
  const block = startBlock(flashblock);
  const skippedBlocks = state.lastStarted !== null && number > state.lastStarted ? number - state.lastStarted - 1n : 0n;
  return {
    state: { ...state, current: block, dropping: null, lastStarted: number },
    events: [{ type: 'accepted', kind: 'new_block', flashblock, block, skippedBlocks }],
  };
}
