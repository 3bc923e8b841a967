/**
 * src/simulate/: flashlog's own engine for `eth_simulateV1` (and, through chain-rules.ts, the
 * stateless re-execution in src/evm/op/).
 *
 * Why ethereumjs and not EDR: a simulation executes over state that is not a chain EDR can hold,
 * read account by account from the upstream at a block (fork-state.ts) or from a witness, with
 * per-call block overrides, several simulated blocks and transfer logs; ethereumjs takes a state
 * manager we write and runs in a worker thread we can stop on a timeout. What OP changes in the
 * EVM itself (the P256 precompile at RIP-7212's price) is added in chain-rules.ts.
 *
 * Why `eth_call` uses neither: see src/execute/port.ts (it goes to the upstream node, with the
 * pre-confirmed state laid under the caller's overrides).
 *
 * This file is the port: a pool of worker threads running simulate-blocks.ts.
 */
import { Worker } from 'node:worker_threads';
import { ExecutionTimeoutError, FlashlogError, JsonRpcError, LimitExceededError, ServerError } from '../errors.ts';
import type { StateOverrides } from '../schemas/state-overrides.ts';
import type { RulesSpec } from './chain-rules.ts';
import type { SimulationBase } from './simulate-blocks.ts';
import type { SimulatePayload } from './payload.ts';

/** One simulation, as it crosses to a worker thread (structured-clone data only). */
export interface SimulationJob {
  readonly payload: SimulatePayload;
  readonly base: SimulationBase;
  readonly prestate: StateOverrides | undefined;
  readonly rules: RulesSpec;
  readonly gasCap: bigint;
  readonly upstreamUrl: string;
  /** Date.now() by which the answer is due. */
  readonly deadline: number;
  readonly timeoutMs: number;
}

export type SimulationReply =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: { readonly rpcCode: number; readonly message: string; readonly data: unknown } };

export interface SimulationPool {
  run(job: SimulationJob): Promise<unknown>;
  close(): Promise<void>;
}

interface Slot {
  worker: Worker | undefined;
  /** Settles when the thread has loaded the engine (its first message). */
  ready: Promise<void>;
  busy: boolean;
}

interface Queued {
  readonly job: SimulationJob;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Answers the job -32016 when its deadline passes while it still waits for a thread. */
  expiry?: NodeJS.Timeout;
}

/** Simulations that may wait for a thread, per thread; more are refused at once. */
const QUEUE_PER_WORKER = 64;
/** A thread that has not loaded the engine by then is given up on (it takes about a second). */
const START_TIMEOUT_MS = 10_000;

/** Starts a slot's thread; `slot.ready` settles once it has loaded the engine. */
function startWorker(slot: Slot): Worker {
  const worker = new Worker(new URL('./worker.ts', import.meta.url));
  worker.unref();
  slot.worker = worker;
  slot.ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new FlashlogError('WORKER_FAILED', `did not load the engine within ${START_TIMEOUT_MS} ms`, { retryable: true }));
    }, START_TIMEOUT_MS);
    worker.once('message', () => {
      clearTimeout(timer);
      resolve();
    });
    worker.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    worker.once('exit', (code) => {
      clearTimeout(timer);
      reject(new FlashlogError('WORKER_FAILED', `exited with code ${code} while starting`, { retryable: true }));
    });
  });
  slot.ready.catch(() => {});
  // A thread that dies between jobs is replaced when the next job comes.
  worker.on('exit', () => {
    if (slot.worker === worker) slot.worker = undefined;
  });
  return worker;
}

/**
 * Simulations run on worker threads, so that one long call (the EVM cannot be interrupted inside
 * a call; 50M gas of a tight loop takes seconds in ethereumjs) never stops the gateway's event
 * loop. A job not answered within the time limit is answered -32016 and its thread is
 * terminated and replaced; a job still queued at its deadline is answered -32016 then and never
 * starts; a full queue refuses at once. Threads start on first use and keep their state-read
 * cache between jobs.
 */
export function createSimulationPool(options: { readonly workers: number }): SimulationPool {
  const slots: Slot[] = Array.from({ length: Math.max(1, options.workers) }, () => ({
    worker: undefined,
    ready: Promise.resolve(),
    busy: false,
  }));
  const queue: Queued[] = [];
  let nextId = 1;
  let closed = false;

  const capacity = slots.length * QUEUE_PER_WORKER;
  const timeoutError = (job: SimulationJob) =>
    new ExecutionTimeoutError(`eth_simulateV1: execution took longer than the ${job.timeoutMs} ms limit (--call-timeout-ms)`);

  function dispatch(): void {
    if (closed) return;
    for (const slot of slots) {
      if (slot.busy) continue;
      // a job whose deadline has passed (its expiry timer not yet run) never starts
      let next = queue.shift();
      while (next && Date.now() >= next.job.deadline) {
        clearTimeout(next.expiry);
        next.reject(timeoutError(next.job));
        next = queue.shift();
      }
      if (!next) return;
      clearTimeout(next.expiry);
      void runOn(slot, next);
    }
  }

  function expire(queued: Queued): void {
    const at = queue.indexOf(queued);
    if (at < 0) return;
    queue.splice(at, 1);
    queued.reject(timeoutError(queued.job));
  }

  /** Frees a slot that did not run its job, answers the job, and hands the slot the next one. */
  function giveBack(slot: Slot, queued: Queued, error: JsonRpcError): void {
    slot.busy = false;
    queued.reject(error);
    dispatch();
  }

  /**
   * The time limit counts from the request, waiting for a thread included, except a thread's
   * start (loading the engine, about a second; at most START_TIMEOUT_MS): that is the pool's
   * cost, not the request's.
   */
  async function runOn(slot: Slot, queued: Queued): Promise<void> {
    slot.busy = true;
    let worker: Worker;
    const waitedFrom = Date.now();
    try {
      worker = slot.worker ?? startWorker(slot);
      await slot.ready;
    } catch (error) {
      slot.worker = undefined;
      giveBack(
        slot,
        queued,
        new ServerError(`eth_simulateV1: the simulation thread did not start: ${(error as Error).message}`, { cause: error }),
      );
      return;
    }
    const job = { ...queued.job, deadline: queued.job.deadline + (Date.now() - waitedFrom) };
    if (Date.now() >= job.deadline) {
      giveBack(slot, queued, timeoutError(job));
      return;
    }
    const id = nextId++;
    const finish = () => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      slot.busy = false;
      dispatch();
    };
    const onMessage = (reply: SimulationReply) => {
      if (reply.id !== id) return;
      finish();
      if ('error' in reply) queued.reject(new JsonRpcError(reply.error.rpcCode, reply.error.message, { data: reply.error.data }));
      else queued.resolve(reply.result);
    };
    const onError = (error: Error) => {
      slot.worker = undefined;
      finish();
      queued.reject(new ServerError(`eth_simulateV1: the simulation thread failed: ${error.message}`, { cause: error }));
    };
    const onExit = (code: number) => onError(new FlashlogError('WORKER_FAILED', `exited with code ${code}`, { retryable: true }));
    const timer = setTimeout(() => {
      slot.worker = undefined;
      void worker.terminate();
      finish();
      queued.reject(timeoutError(job));
    }, job.deadline - Date.now());
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage({ id, job });
  }

  return {
    run(job) {
      if (closed) return Promise.reject(new ServerError('eth_simulateV1: the gateway is shutting down'));
      if (queue.length >= capacity) {
        return Promise.reject(
          new LimitExceededError(
            `eth_simulateV1: ${queue.length} simulations are already waiting for a thread; retry later or raise --simulate-workers`,
          ),
        );
      }
      return new Promise((resolve, reject) => {
        const queued: Queued = { job, resolve, reject };
        queued.expiry = setTimeout(() => expire(queued), Math.max(0, job.deadline - Date.now()));
        queue.push(queued);
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const queued of queue.splice(0)) {
        clearTimeout(queued.expiry);
        queued.reject(new ServerError('eth_simulateV1: the gateway is shutting down'));
      }
      await Promise.all(slots.map((slot) => slot.worker?.terminate()));
    },
  };
}
