import { describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { commit, initialLinkState, place, reset, tip, type LinkedBlock } from './link.ts';

const hash = (label: string) => keccak256(toHex(label));
/** Block `n` of fork `fork`, whose parent is block n-1 of `parentFork`. */
const block = (n: number, fork = 'a', parentFork = fork): LinkedBlock => ({
  number: BigInt(n),
  hash: hash(`${fork}${n}`),
  parentHash: hash(`${parentFork}${n - 1}`),
});

function chain(from: number, to: number, fork = 'a') {
  let state = initialLinkState<LinkedBlock>(8);
  for (let n = from; n <= to; n++) state = commit(state, [block(n, fork)]);
  return state;
}

describe('linking 200 ms blocks by parent hash', () => {
  it('starts anywhere, then takes each child of the tip', () => {
    const state = chain(10, 12);
    expect(place(state, block(13))).toEqual({ type: 'links', withdrawn: [] });
    expect(tip(commit(state, [block(13)]))?.number).toBe(13n);
  });

  it('ignores a block it holds', () => {
    expect(place(chain(10, 12), block(11))).toEqual({ type: 'duplicate' });
  });

  it('asks for the parent after a gap, until the backfill reaches the tip', () => {
    const state = chain(10, 12);
    expect(place(state, block(15))).toEqual({ type: 'needs-parent' });
    expect(place(state, block(14))).toEqual({ type: 'needs-parent' });
    expect(place(state, block(13))).toEqual({ type: 'links', withdrawn: [] });
    expect(commit(state, [block(13), block(14), block(15)]).held.map((b) => b.number)).toEqual([10n, 11n, 12n, 13n, 14n, 15n]);
  });

  it('walks back a reorg to the common ancestor and withdraws every held block above it', () => {
    const state = chain(10, 14);
    // Fork b branches off after 11: b12, b13, b14, b15.
    expect(place(state, block(15, 'b'))).toEqual({ type: 'needs-parent' });
    expect(place(state, block(13, 'b'))).toEqual({ type: 'needs-parent' });
    const first = place(state, block(12, 'b', 'a'));
    expect(first.type).toBe('links');
    expect(first.type === 'links' && first.withdrawn.map((b) => b.hash)).toEqual([hash('a12'), hash('a13'), hash('a14')]);
    const next = commit(state, [block(12, 'b', 'a'), block(13, 'b'), block(14, 'b'), block(15, 'b')]);
    expect(next.held.map((b) => b.hash)).toEqual([hash('a10'), hash('a11'), hash('b12'), hash('b13'), hash('b14'), hash('b15')]);
  });

  it('takes a replaced head at the same height, and a head number that goes backwards', () => {
    const state = chain(10, 14);
    const replaced = place(state, block(14, 'b', 'a'));
    expect(replaced.type === 'links' && replaced.withdrawn.map((b) => b.number)).toEqual([14n]);
    const shorter = place(state, block(13, 'b', 'a'));
    expect(shorter.type === 'links' && shorter.withdrawn.map((b) => b.number)).toEqual([13n, 14n]);
  });

  it('says when a walk back would leave the window', () => {
    // 1-20 read, 13-20 held: fork b from 9 reaches below what is held.
    expect(place(chain(1, 20), block(13, 'b', 'b'))).toEqual({ type: 'beyond-window' });
    // 10-14 read, then a reorg to a shorter chain at 13: 10-12 and b13 held, below them was read.
    const shorter = commit(chain(5, 14), [block(13, 'b', 'a')]);
    expect(place({ ...shorter, held: shorter.held.slice(-4) }, block(10, 'c', 'c'))).toEqual({ type: 'beyond-window' });
  });

  it('takes a reorg of the first blocks read as a reorg: nothing below them was ever read', () => {
    // The first head read (10) replaced at once by b10: no common ancestor held, but none was read.
    const first = chain(10, 10);
    expect(place(first, block(10, 'b', 'b'))).toEqual({ type: 'links', withdrawn: [block(10)] });
    // b11's parent b10 is read by the walk back, which then links at 10.
    expect(place(chain(10, 12), block(11, 'b', 'b'))).toEqual({ type: 'needs-parent' });
    expect(place(chain(10, 12), block(10, 'b', 'b'))).toEqual({ type: 'links', withdrawn: [block(10), block(11), block(12)] });
    // The parent of the first block read is not a reorg: it is the chain held.
    expect(place(first, block(9))).toEqual({ type: 'duplicate' });
    // After a resync the first block read is the head read then.
    expect(place(commit(reset(chain(1, 20)), [block(30)]), block(30, 'b', 'b'))).toEqual({ type: 'links', withdrawn: [block(30)] });
  });

  it('keeps at most maxHeld blocks', () => {
    expect(chain(1, 20).held.map((b) => Number(b.number))).toEqual([13, 14, 15, 16, 17, 18, 19, 20]);
  });
});
