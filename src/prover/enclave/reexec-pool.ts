import { Worker } from 'node:worker_threads';
import { FlashlogError } from '../../errors.ts';
import type { RollupConfig } from '../../op/rollup-config.ts';
import type { Witness } from '../../evm/op/witness-state.ts';
import { EnclaveRefusal } from './refusal.ts';
import type { ReexecutedBlock } from './reexecute.ts';
import { packWitness, type BlockJob, type FromWorker, type PackedWitness, type ToWorker } from './reexec-jobs.ts';

/**
 * The enclave's re-execution threads: a range's blocks are independent once the request's
 * preimages are known (each runs from its parent's stateRoot in the witness), so they run on
 * several cores at once. One pool per enclave process, reused across proofs; a proof opens a
 * session, whose witness is sent to a thread once, before that thread's first block of the proof.
 * A thread that throws or dies fails the job it was running with a refusal naming the block, and
 * is replaced on its next job; the other proofs go on.
 */
export interface ReexecPool {
  readonly size: number;
  session(config: RollupConfig, witness: Witness): ReexecSession;
  close(): Promise<void>;
}

export interface ReexecSession {
  /** Re-executes one block on the first free thread; a refusal (the block's, or its thread's failure) rejects. */
  run(job: BlockJob): Promise<ReexecutedBlock>;
  /** Refuses this proof's jobs that no thread has started for the blocks after `after`. */
  cancelAfter(after: number): void;
  /** Refuses this proof's jobs that no thread has started, and has the threads drop its witness once its running jobs are done. */
  end(): void;
  /** What sending the witness cost: packing it once, and posting it to each thread that ran a block. */
  readonly stats: { packMs: number; postMs: number; posts: number; bytes: number };
}

export interface ReexecPoolOptions {
  readonly workers: number;
  /** The thread's module (tests substitute one that fails on purpose); default reexec-worker.ts. */
  readonly workerUrl?: URL;
  readonly workerData?: unknown;
  /** A thread that has not loaded the executor by then is given up on (it takes one to two seconds). */
  readonly startTimeoutMs?: number;
}

/** A job's refusal when its proof is cancelled before a thread took it (the proof already has its refusal). */
export class CancelledJob extends EnclaveRefusal {}

interface Slot {
  worker: Worker | undefined;
  ready: Promise<void>;
  busy: boolean;
  /** The sessions whose witness this thread holds. */
  sessions: Set<number>;
}

interface Queued {
  readonly session: number;
  readonly job: BlockJob;
  readonly packed: () => PackedWitness;
  readonly config: RollupConfig;
  readonly stats: ReexecSession['stats'];
  resolve(value: ReexecutedBlock): void;
  reject(error: unknown): void;
}

/** Starts a slot's thread; `slot.ready` settles once it has loaded the executor. */
function startWorker(slot: Slot, workerUrl: URL, workerData: unknown, startTimeoutMs: number): Worker {
  const worker = new Worker(workerUrl, { workerData });
  worker.unref();
  slot.worker = worker;
  slot.sessions = new Set();
  slot.ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(
        new FlashlogError('WORKER_FAILED', `a re-execution worker did not load the executor within ${startTimeoutMs} ms`, {
          retryable: true,
        }),
      );
    }, startTimeoutMs);
    worker.once('message', () => (clearTimeout(timer), resolve()));
    worker.once('error', (error) => (clearTimeout(timer), reject(error)));
    worker.once(
      'exit',
      (code) => (
        clearTimeout(timer),
        reject(new FlashlogError('WORKER_FAILED', `exited with code ${code} while starting`, { retryable: true }))
      ),
    );
  });
  slot.ready.catch(() => {});
  worker.on('error', () => {}); // reported to the job it was running (runOn); a thread dying idle is replaced on its next job
  worker.on('exit', () => {
    if (slot.worker === worker) slot.worker = undefined;
  });
  return worker;
}

export function createReexecPool(options: ReexecPoolOptions): ReexecPool {
  const workerUrl = options.workerUrl ?? new URL('./reexec-worker.ts', import.meta.url);
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const slots: Slot[] = Array.from({ length: Math.max(1, options.workers) }, () => ({
    worker: undefined,
    ready: Promise.resolve(),
    busy: false,
    sessions: new Set(),
  }));
  const queue: Queued[] = [];
  let nextSession = 1;
  let nextJob = 1;
  let closed = false;

  function dispatch(): void {
    if (closed) return;
    for (const slot of slots) {
      if (slot.busy) continue;
      const next = queue.shift();
      if (!next) return;
      void runOn(slot, next);
    }
  }

  async function runOn(slot: Slot, queued: Queued): Promise<void> {
    slot.busy = true;
    const { job } = queued;
    let worker: Worker;
    try {
      worker = slot.worker ?? startWorker(slot, workerUrl, options.workerData, startTimeoutMs);
      await slot.ready;
      if (slot.worker !== worker)
        throw new FlashlogError('WORKER_FAILED', 'a re-execution worker exited before its first job', { retryable: true });
    } catch (error) {
      slot.worker = undefined;
      slot.busy = false;
      queued.reject(new EnclaveRefusal(`L2 block ${job.number}: the re-execution thread did not start: ${(error as Error).message}`));
      dispatch();
      return;
    }
    worker.ref();
    if (!slot.sessions.has(queued.session)) {
      const packed = queued.packed();
      const t0 = performance.now();
      worker.postMessage({ type: 'witness', session: queued.session, config: queued.config, witness: packed } satisfies ToWorker);
      queued.stats.postMs += performance.now() - t0;
      queued.stats.posts += 1;
      slot.sessions.add(queued.session);
    }
    const id = nextJob++;
    let settled = false;
    const finish = () => {
      settled = true;
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      worker.unref();
      slot.busy = false;
      dispatch();
    };
    const onMessage = (reply: FromWorker) => {
      if (reply.type === 'ready' || reply.id !== id) return;
      finish();
      if (reply.type === 'done') queued.resolve(reply.result);
      else queued.reject(new EnclaveRefusal(reply.message));
    };
    const onError = (error: Error) => {
      if (settled) return;
      slot.worker = undefined;
      void worker.terminate();
      finish();
      queued.reject(new EnclaveRefusal(`L2 block ${job.number}: the re-execution thread failed: ${error.message}`));
    };
    const onExit = (code: number) => onError(new FlashlogError('WORKER_FAILED', `it exited with code ${code}`, { retryable: true }));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage({ type: 'block', id, session: queued.session, ...job } satisfies ToWorker);
  }

  /** Tells every thread that holds the session's witness to drop it (after its current job: messages are in order). */
  function endSession(session: number): void {
    for (const slot of slots) {
      if (!slot.sessions.delete(session)) continue;
      slot.worker?.postMessage({ type: 'end', session } satisfies ToWorker);
    }
  }

  return {
    size: slots.length,
    session(config, witness) {
      const session = nextSession++;
      const stats = { packMs: 0, postMs: 0, posts: 0, bytes: 0 };
      let packed: PackedWitness | undefined;
      const packOnce = () => {
        if (!packed) {
          const t0 = performance.now();
          packed = packWitness(witness);
          stats.packMs = performance.now() - t0;
          stats.bytes = packed.keys.length + packed.values.length + packed.ends.byteLength;
        }
        return packed;
      };
      let pending = 0;
      let ended = false;
      const settleOne = () => {
        if (--pending === 0 && ended) endSession(session);
      };
      const cancel = (after: number) => {
        for (let i = queue.length - 1; i >= 0; i--) {
          const queued = queue[i]!;
          if (queued.session !== session || queued.job.number <= after) continue;
          queue.splice(i, 1);
          queued.reject(new CancelledJob(`L2 block ${queued.job.number}: not re-executed, the proof was refused`));
        }
      };
      return {
        stats,
        run(job) {
          if (closed) return Promise.reject(new EnclaveRefusal(`L2 block ${job.number}: the enclave is shutting down`));
          pending++;
          return new Promise<ReexecutedBlock>((resolve, reject) => {
            queue.push({ session, job, packed: packOnce, config, stats, resolve, reject });
            dispatch();
          }).finally(settleOne);
        },
        cancelAfter: cancel,
        end() {
          ended = true;
          cancel(-1);
          if (pending === 0) endSession(session);
        },
      };
    },
    async close() {
      closed = true;
      for (const queued of queue.splice(0))
        queued.reject(new EnclaveRefusal(`L2 block ${queued.job.number}: the enclave is shutting down`));
      await Promise.all(slots.map((slot) => slot.worker?.terminate()));
    },
  };
}
