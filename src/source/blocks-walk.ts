import { place, tip, type LinkState } from '../chain/link.ts';
import { walkGap, type BlockRange } from '../chain/resume.ts';
import type { NodeReader, ReadBlock } from './node-reader.ts';

/**
 * The blocks source's walk back from a head (blocks.ts), by parent hash, to a block held
 * (src/chain/link.ts). Where it ends:
 *
 *   duplicate       the head is held already
 *   unknown-parent  the node does not know a parent on the way (asked again at the next head)
 *   linked          the new blocks (oldest first) and the held blocks they replace; `resync` when
 *                   the walk did not link: `below-window` (it went below every block held, so all
 *                   are withdrawn: a reorg deeper than the window, the chain checked first) or
 *                   `too-long` (it gave up after `maxWalkBlocks`: the numbers between the newest
 *                   block held and the oldest walked are `gap`)
 *
 * Before a resync the node's chain is checked (`verifyChain` throws for another chain).
 */
export type Walk =
  | { readonly type: 'duplicate' }
  | { readonly type: 'unknown-parent'; readonly block: ReadBlock }
  | {
      readonly type: 'linked';
      readonly segment: readonly ReadBlock[];
      readonly withdrawn: readonly ReadBlock[];
      readonly resync: null | { readonly type: 'below-window' } | { readonly type: 'too-long'; readonly gap: BlockRange | null };
    };

export async function walkBack(
  state: LinkState<ReadBlock>,
  head: ReadBlock,
  reader: NodeReader,
  maxWalkBlocks: number,
  verifyChain: (() => Promise<void>) | undefined,
): Promise<Walk> {
  const segment: ReadBlock[] = [];
  let cursor = head;
  for (;;) {
    const placement = place(state, cursor);
    if (placement.type === 'duplicate') return { type: 'duplicate' };
    if (placement.type === 'links') return { type: 'linked', segment: [cursor, ...segment], withdrawn: placement.withdrawn, resync: null };
    if (placement.type === 'beyond-window') {
      // Every block held is replaced: the common ancestor is below them all. `place` answers this
      // only once the window has slid past the first block read (a replacement of that one links,
      // src/chain/link.ts), so it is always a reorg deeper than the window, however many blocks are
      // held after a reorg to a shorter chain: the chain is checked before anything is committed.
      await verifyChain?.();
      return { type: 'linked', segment: [cursor, ...segment], withdrawn: state.held, resync: { type: 'below-window' } };
    }
    if (segment.length >= maxWalkBlocks) {
      await verifyChain?.();
      const from = segment[0]!.number;
      return {
        type: 'linked',
        segment,
        withdrawn: state.held.filter((held) => held.number >= from),
        resync: { type: 'too-long', gap: walkGap(tip(state)?.number ?? null, from) },
      };
    }
    segment.unshift(cursor);
    const parent = await reader.read(cursor.parentHash);
    if (!parent) return { type: 'unknown-parent', block: cursor };
    cursor = parent;
  }
}
