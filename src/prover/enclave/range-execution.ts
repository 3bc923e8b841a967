import type { RollupConfig } from '../../op/rollup-config.ts';
import type { Witness } from '../../evm/op/witness-state.ts';
import { reexecuteBlock, type ReexecutedBlock } from './reexecute.ts';
import type { BlockJob } from './reexec-jobs.ts';
import { CancelledJob, type ReexecPool } from './reexec-pool.ts';

/**
 * A proof's re-executions, in block order. Without a pool each block runs in this thread when it
 * is submitted, and its refusal is thrown there (one block after the other, as the checks always
 * ran). With a pool, submitting queues the block on the threads and returns at once; `finish`
 * waits for every execution and answers the executed blocks in order, or the refusal of the
 * earliest block that failed, the same one the in-thread order would have met first. A failure
 * cancels the queued blocks after it. Nothing may be signed before `finish` has answered.
 */
export interface RangeExecution {
  submit(job: BlockJob): Promise<void>;
  finish(): Promise<ReexecutedBlock[]>;
  /** Drops what is still queued and lets the threads forget the witness (always, once the proof is answered). */
  end(): void;
}

export function rangeExecution(config: RollupConfig, witness: Witness, pool?: ReexecPool): RangeExecution {
  if (!pool || pool.size < 1) {
    const done: ReexecutedBlock[] = [];
    return {
      async submit(job) {
        done.push(await reexecuteBlock(config, job.parentRlp, job.rlp, witness, job.derived));
      },
      finish: async () => done,
      end() {},
    };
  }
  const session = pool.session(config, witness);
  const runs: Promise<ReexecutedBlock>[] = [];
  return {
    async submit(job) {
      const run = session.run(job);
      run.catch(() => session.cancelAfter(job.number));
      runs.push(run);
    },
    async finish() {
      const settled = await Promise.allSettled(runs);
      const rejected = settled.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      const failed = rejected.find((outcome) => !(outcome.reason instanceof CancelledJob)) ?? rejected[0];
      if (failed) throw failed.reason;
      return settled.map((outcome) => (outcome as PromiseFulfilledResult<ReexecutedBlock>).value);
    },
    end: () => session.end(),
  };
}
