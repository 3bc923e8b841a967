import { bytesToHex, type Hex } from 'viem';
import { errorMessage, FlashlogError } from '../../errors.ts';
import type { PayloadAttributes } from '../../evm/op/execute-block.ts';
import type { RollupConfig } from '../../op/rollup-config.ts';
import type { Witness } from '../../evm/op/witness-state.ts';
import { reexecuteBlock, type ReexecutedBlock } from './reexecute.ts';

/**
 * What crosses between the enclave and its re-execution threads (reexec-pool.ts), all structured-
 * clone data: bigints (block numbers, gas, fees in the derived attributes) and Uint8Arrays cross
 * as themselves. A proof's witness crosses once per thread, packed into three buffers (one copy
 * each, instead of one clone per trie node); its blocks then cross as header RLPs.
 */
export interface PackedWitness {
  /** 32 bytes per preimage: its keccak256. */
  readonly keys: Uint8Array;
  /** The preimages back to back. */
  readonly values: Uint8Array;
  /** Where each preimage ends in `values`. */
  readonly ends: Uint32Array;
}

export interface BlockJob {
  /** The block's number, for a refusal that names it. */
  readonly number: number;
  readonly parentRlp: Hex;
  readonly rlp: Hex;
  /** The attributes derived from L1 (the derive check), else the header's own. */
  readonly derived?: PayloadAttributes | undefined;
}

export type ToWorker =
  | { readonly type: 'witness'; readonly session: number; readonly config: RollupConfig; readonly witness: PackedWitness }
  | ({ readonly type: 'block'; readonly id: number; readonly session: number } & BlockJob)
  | { readonly type: 'end'; readonly session: number };

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number; readonly result: ReexecutedBlock }
  | { readonly type: 'failed'; readonly id: number; readonly message: string };

/** The witness as three buffers (one pass, one copy of every preimage). */
export function packWitness(witness: Witness): PackedWitness {
  let size = 0;
  for (const value of witness.values()) size += value.length;
  if (size > 0xffff_ffff) throw new FlashlogError('WITNESS_INVALID', `witness of ${size} bytes is over 4 GiB`);
  const keys = new Uint8Array(witness.size * 32);
  const values = new Uint8Array(size);
  const ends = new Uint32Array(witness.size);
  let i = 0;
  let at = 0;
  for (const [key, value] of witness) {
    keys.set(hexBytes(key), i * 32);
    values.set(value, at);
    at += value.length;
    ends[i++] = at;
  }
  return { keys, values, ends };
}

/** The witness map again, its values views into the one buffer. */
export function unpackWitness(packed: PackedWitness): Map<Hex, Uint8Array> {
  const witness = new Map<Hex, Uint8Array>();
  let start = 0;
  for (let i = 0; i < packed.ends.length; i++) {
    const end = packed.ends[i]!;
    witness.set(bytesToHex(packed.keys.subarray(i * 32, i * 32 + 32)), packed.values.subarray(start, end));
    start = end;
  }
  return witness;
}

function hexBytes(hex: Hex): Uint8Array {
  return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
}

/**
 * A re-execution thread's side (reexec-worker.ts): the witnesses of the proofs in flight by
 * session, and one block at a time re-executed against its proof's witness. Every failure is
 * answered as text (reexecuteBlock's refusals name the block); nothing is thrown to the thread.
 */
export function reexecWorker(reply: (message: FromWorker) => void): (message: ToWorker) => void {
  const sessions = new Map<number, { config: RollupConfig; witness: Witness }>();
  return (message) => {
    switch (message.type) {
      case 'witness':
        sessions.set(message.session, { config: message.config, witness: unpackWitness(message.witness) });
        return;
      case 'end':
        sessions.delete(message.session);
        return;
      case 'block': {
        const session = sessions.get(message.session);
        if (!session) {
          reply({ type: 'failed', id: message.id, message: `L2 block ${message.number}: the thread holds no witness for its proof` });
          return;
        }
        reexecuteBlock(session.config, message.parentRlp, message.rlp, session.witness, message.derived).then(
          (result) => reply({ type: 'done', id: message.id, result }),
          (error: unknown) => reply({ type: 'failed', id: message.id, message: errorMessage(error) }),
        );
      }
    }
  };
}
