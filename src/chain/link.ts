/**
 * Linking 200 ms blocks read from a node (the blocks source), as a pure rule: each block must name
 * the block held below it as its parent, by hash. What the source holds is a contiguous window of
 * the newest blocks (ascending, each the parent of the next).
 *
 *   block already held (same hash)              -> duplicate: nothing to do
 *   nothing held yet                            -> links: start here
 *   its parent is held                          -> links: every held block at or above its
 *                                                  number is withdrawn (a reorg when any is)
 *   its parent is not held, but would be above
 *   the lowest held block                       -> needs-parent: fetch the parent by hash and place
 *                                                  it first (backfill after a gap, or the walk back
 *                                                  to the common ancestor of a reorg)
 *   its parent would be below the window, and
 *   the window still starts at the first block
 *   read since the start or the last resync     -> links: a reorg of the first blocks read (the
 *                                                  node replaced its head just after the start);
 *                                                  every held block is withdrawn. The parent of
 *                                                  that first block itself is a duplicate.
 *   its parent would be below the window        -> beyond-window: the caller resyncs
 *
 * The caller walks back at most a bounded number of blocks; past that it resyncs too.
 */
export interface LinkedBlock {
  readonly number: bigint;
  readonly hash: `0x${string}`;
  readonly parentHash: `0x${string}`;
}

export interface LinkState<B extends LinkedBlock> {
  /** The newest blocks, ascending and contiguous. */
  readonly held: readonly B[];
  readonly maxHeld: number;
  /**
   * The number of the first block held since the start or the last resync (undefined: none yet).
   * While `held[0]` is that block, nothing below the window was ever read: a block whose parent is
   * below it is a reorg of what was read, not one deeper than the window.
   */
  readonly firstRead?: bigint | undefined;
}

export type Placement<B extends LinkedBlock> =
  | { readonly type: 'duplicate' }
  | { readonly type: 'links'; readonly withdrawn: readonly B[] }
  | { readonly type: 'needs-parent' }
  | { readonly type: 'beyond-window' };

export const initialLinkState = <B extends LinkedBlock>(maxHeld = 64): LinkState<B> => ({ held: [], maxHeld });

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Where `block` goes relative to what is held. Pure. */
export function place<B extends LinkedBlock>(state: LinkState<B>, block: LinkedBlock): Placement<B> {
  const { held } = state;
  if (held.some((candidate) => candidate.number === block.number && same(candidate.hash, block.hash))) return { type: 'duplicate' };
  if (held.length === 0) return { type: 'links', withdrawn: [] };
  const parent = held.find((candidate) => candidate.number === block.number - 1n);
  if (parent && same(parent.hash, block.parentHash))
    return { type: 'links', withdrawn: held.filter((candidate) => candidate.number >= block.number) };
  if (block.number - 1n < held[0]!.number) {
    if (held[0]!.number !== state.firstRead) return { type: 'beyond-window' };
    if (same(held[0]!.parentHash, block.hash)) return { type: 'duplicate' };
    return { type: 'links', withdrawn: held.filter((candidate) => candidate.number >= block.number) };
  }
  return { type: 'needs-parent' };
}

/**
 * Holds `segment` (ascending, contiguous, its first block linked by `place`): every held block at
 * or above its first number goes, and the window keeps its newest `maxHeld`.
 * @example commit(state, [parent, child]) // after place(state, parent) gave `links`
 */
export function commit<B extends LinkedBlock>(state: LinkState<B>, segment: readonly B[]): LinkState<B> {
  if (segment.length === 0) return state;
  const first = segment[0]!.number;
  const held = [...state.held.filter((candidate) => candidate.number < first), ...segment].slice(-state.maxHeld);
  const firstRead = state.firstRead === undefined || first < state.firstRead ? first : state.firstRead;
  return { ...state, held, firstRead };
}

/** Forgets everything held (a resync). */
export const reset = <B extends LinkedBlock>(state: LinkState<B>): LinkState<B> => ({ ...state, held: [], firstRead: undefined });

/** The newest block held. */
export const tip = <B extends LinkedBlock>(state: LinkState<B>): B | undefined => state.held[state.held.length - 1];
