import { describe, expect, it } from 'vitest';
import { createCommitChain } from './commit-chain.ts';

/** The bridge's commits: one at a time, in the order asked; a failed one is told and the rest go on. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('the commit chain', () => {
  it('starts a commit only once the one before it has settled, and tells each result', async () => {
    const started: string[] = [];
    const pending: ReturnType<typeof deferred>[] = [];
    const told: string[] = [];
    const chain = createCommitChain({
      commit: (partition, offset) => {
        started.push(`${partition}:${offset}`);
        const next = deferred();
        pending.push(next);
        return next.promise;
      },
      committed: (partition, offset) => told.push(`committed ${partition}:${offset}`),
      failed: (error, partition, offset) => told.push(`failed ${partition}:${offset} ${(error as Error).message}`),
    });
    chain.commit(0, 5n);
    chain.commit(1, 2n);
    chain.commit(0, 9n);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['0:5']);
    pending[0]!.reject(new Error('coordinator moved'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['0:5', '1:2']);
    pending[1]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['0:5', '1:2', '0:9']);
    pending[2]!.resolve();
    await chain.settled();
    expect(told).toEqual(['failed 0:5 coordinator moved', 'committed 1:2', 'committed 0:9']);
  });

  it('settles at once with nothing queued', async () => {
    const chain = createCommitChain({ commit: async () => {} });
    await expect(chain.settled()).resolves.toBeUndefined();
  });
});
