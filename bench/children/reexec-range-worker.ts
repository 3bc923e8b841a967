/**
 * Thread of bench/reexec.ts's range rows: the enclave's re-execution thread
 * (src/prover/enclave/reexec-worker.ts, same pool, same messages, same packed witness) running
 * `executeBlock` alone, as the single-thread rows do. The OP Sepolia fixtures predate Isthmus and
 * their witnesses lack the message passer's account, so the enclave's output root (its storage
 * root) cannot be computed from them; the block hash is still checked by the bench.
 */
import { parentPort } from 'node:worker_threads';
import type { Hex } from 'viem';
import { errorMessage } from '../../src/errors.ts';
import { executeBlock } from '../../src/evm/op/execute-block.ts';
import { decodeHeaderRlp } from '../../src/op/header.ts';
import type { RollupConfig } from '../../src/op/rollup-config.ts';
import { unpackWitness, type FromWorker, type ToWorker } from '../../src/prover/enclave/reexec-jobs.ts';

const port = parentPort!;
const sessions = new Map<number, { config: RollupConfig; witness: Map<Hex, Uint8Array> }>();
const reply = (message: FromWorker) => port.postMessage(message);
port.on('message', (message: ToWorker) => {
  if (message.type === 'witness') sessions.set(message.session, { config: message.config, witness: unpackWitness(message.witness) });
  else if (message.type === 'end') sessions.delete(message.session);
  else {
    const { config, witness } = sessions.get(message.session)!;
    executeBlock({ config, parent: decodeHeaderRlp(message.parentRlp), witness, attributes: message.derived! }).then(
      (executed) =>
        reply({
          type: 'done',
          id: message.id,
          result: { number: message.number, hash: executed.hash, stateRoot: executed.header.stateRoot, messagePasserStorageRoot: '0x' },
        }),
      (error: unknown) => reply({ type: 'failed', id: message.id, message: errorMessage(error) }),
    );
  }
});
reply({ type: 'ready' });
