/**
 * Which request offsets may be committed: per partition, the records taken in offset order and
 * whether each is finished. It is an invariant that an offset is committable only when every
 * record taken before it in its partition is finished, so a proof still running is redelivered
 * after a restart, whatever finished after it.
 */
export interface CommitWindow {
  /** A record taken off the log; finish it with `finish`. */
  take(partition: number, offset: bigint): { readonly partition: number; done: boolean; readonly offset: bigint };
  /** Marks the record finished; the next offset to commit for its partition, if it moved. */
  finish(entry: { readonly partition: number; done: boolean; readonly offset: bigint }): bigint | undefined;
}

export function createCommitWindow(): CommitWindow {
  const pending = new Map<number, { partition: number; offset: bigint; done: boolean }[]>();
  return {
    take(partition, offset) {
      const entry = { partition, offset, done: false };
      let list = pending.get(partition);
      if (!list) pending.set(partition, (list = []));
      list.push(entry);
      return entry;
    },
    finish(entry) {
      entry.done = true;
      const list = pending.get(entry.partition);
      if (!list) return undefined;
      let next: bigint | undefined;
      while (list.length > 0 && list[0]!.done) next = list.shift()!.offset + 1n;
      return next;
    },
  };
}
