import { Worker } from 'node:worker_threads';
import type { Hex } from 'viem';
import { FlashlogError } from '../src/errors.ts';

/**
 * KZG commitments and proofs of blobs, computed on a thread of their own (kzg-worker.ts), started
 * at the first call and ended by `close`.
 *
 * @example const { commitments, proofs } = await createKzgThread().prove([blobHex])
 */
export interface KzgThread {
  prove(blobs: readonly Hex[]): Promise<{ commitments: Hex[]; proofs: Hex[] }>;
  close(): Promise<void>;
}

type Reply = { id: number; commitments: Hex[]; proofs: Hex[] } | { id: number; error: string };

export function createKzgThread(): KzgThread {
  let worker: Worker | undefined;
  let next = 0;
  const waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  const start = () => {
    const started = new Worker(new URL('./kzg-worker.ts', import.meta.url));
    started.unref();
    started.on('message', (reply: Reply) => {
      waiting.get(reply.id)?.resolve(reply);
      waiting.delete(reply.id);
    });
    const fail = (error: Error) => {
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
      if (worker === started) worker = undefined;
    };
    started.on('error', fail);
    started.on('exit', (code) => fail(new FlashlogError('WORKER_FAILED', `the KZG thread exited (code ${code})`, { retryable: true })));
    return started;
  };
  return {
    async prove(blobs) {
      worker ??= start();
      const id = next++;
      const reply = await new Promise<Reply>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker!.postMessage({ id, blobs });
      });
      if ('error' in reply) throw new FlashlogError('WORKER_FAILED', `KZG: ${reply.error}`);
      return { commitments: reply.commitments, proofs: reply.proofs };
    },
    async close() {
      const running = worker;
      worker = undefined;
      await running?.terminate();
    },
  };
}
