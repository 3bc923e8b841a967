/**
 * The bridge's commits, one at a time and in the order asked: a commit starts once the one before
 * it has settled, so a later offset never lands before an earlier one of its partition. A commit
 * that fails is told to `failed` and the chain goes on (the records are redelivered and replayed
 * from the stored replies); one that succeeds is told to `committed`.
 */
export interface CommitChain {
  /** Queues the commit of `offset` (the next offset to read) on `partition`. */
  commit(partition: number, offset: bigint): void;
  /** Resolves once every commit queued so far has settled. */
  settled(): Promise<void>;
}

export interface CommitChainOptions {
  readonly commit: (partition: number, offset: bigint) => Promise<void>;
  readonly committed?: (partition: number, offset: bigint) => void;
  readonly failed?: (error: unknown, partition: number, offset: bigint) => void;
}

/**
 * @example const chain = createCommitChain({ commit: (partition, offset) => consumer.commit([{ topic, partition, offset }]) });
 */
export function createCommitChain(options: CommitChainOptions): CommitChain {
  let tail = Promise.resolve();
  return {
    commit(partition, offset) {
      tail = tail
        .then(() => options.commit(partition, offset))
        .then(
          () => options.committed?.(partition, offset),
          (error: unknown) => options.failed?.(error, partition, offset),
        );
    },
    settled: () => tail,
  };
}
