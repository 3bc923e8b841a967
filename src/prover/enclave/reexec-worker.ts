import { parentPort } from 'node:worker_threads';
import { reexecWorker, type ToWorker } from './reexec-jobs.ts';

/** A re-execution thread of the enclave (reexec-pool.ts): loads the executor, says it is ready, runs jobs. */
const port = parentPort!;
const handle = reexecWorker((reply) => port.postMessage(reply));
port.on('message', (message: ToWorker) => handle(message));
port.postMessage({ type: 'ready' });
