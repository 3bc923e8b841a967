import { parentPort, workerData } from 'node:worker_threads';
import { decodeHeaderRlp } from '../../src/op/header.ts';
import { reexecWorker, type ToWorker } from '../../src/prover/enclave/reexec-jobs.ts';

/**
 * The enclave's re-execution thread (src/prover/enclave/reexec-worker.ts), except that the first
 * job for block `workerData.block`, across all threads of the pool (`workerData.crashed`, a shared
 * flag), ends the thread with exit code 7 instead of running.
 */
const { block, crashed } = workerData as { block: number; crashed: SharedArrayBuffer };
const flag = new Int32Array(crashed);
const port = parentPort!;
const handle = reexecWorker((reply) => port.postMessage(reply));
port.on('message', (message: ToWorker) => {
  if (message.type === 'block' && Number(decodeHeaderRlp(message.rlp).number) === block && Atomics.compareExchange(flag, 0, 0, 1) === 0)
    process.exit(7);
  handle(message);
});
port.postMessage({ type: 'ready' });
