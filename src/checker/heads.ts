/**
 * When the node sealed each height, as the checker saw it: a recorded pending height is judged once
 * the node's head is a block past it and the grace has gone by. Pure: checker.ts reads the heads.
 *
 * It is an invariant that `reachedAt` never decreases with the height, so the heights ready to
 * judge are always the lowest ones.
 */
export interface HeadClock {
  /** The highest head read so far (-1 before the first read). */
  readonly head: bigint;
  /**
   * Records a head read at `nowMs`: `higher` when the node moved on, `same`, or `lower` when it
   * went back (a reorg, a restart; the clock keeps the highest).
   */
  observe(head: bigint, nowMs: number): 'higher' | 'same' | 'lower';
  /**
   * When the node's head first reached `height`; undefined while it has not. Every height at or
   * below the first head read counts from that first read: the node had sealed it before.
   */
  reachedAt(height: bigint): number | undefined;
  /** Forgets the reads below `height`; a height below it then counts from the oldest read kept (later, never earlier). */
  forgetBelow(height: bigint): void;
}

export function createHeadClock(): HeadClock {
  /** One mark per head read that moved the head up, in rising order. */
  let marks: { head: bigint; atMs: number }[] = [];
  return {
    get head() {
      return marks.at(-1)?.head ?? -1n;
    },
    observe(head, nowMs) {
      const last = marks.at(-1);
      if (last && head === last.head) return 'same';
      if (last && head < last.head) return 'lower';
      marks.push({ head, atMs: nowMs });
      return 'higher';
    },
    reachedAt(height) {
      return marks.find((mark) => mark.head >= height)?.atMs;
    },
    forgetBelow(height) {
      const keepFrom = marks.findIndex((mark) => mark.head >= height);
      if (keepFrom > 0) marks = marks.slice(keepFrom);
      else if (keepFrom < 0 && marks.length > 1) marks = marks.slice(-1);
    },
  };
}

/**
 * The recorded heights ready to judge, lowest first: those the node has sealed a block past
 * (`height + 1` reached) at least `graceMs` ago.
 *
 * @example readyHeights([5n, 9n], clock, Date.now(), 3000) // [5n] when the head reached 6 over 3 s ago and 10 not yet
 */
export function readyHeights(heights: Iterable<bigint>, clock: HeadClock, nowMs: number, graceMs: number): bigint[] {
  const ready: bigint[] = [];
  for (const height of [...heights].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const since = clock.reachedAt(height + 1n);
    if (since === undefined || nowMs - since < graceMs) break;
    ready.push(height);
  }
  return ready;
}
