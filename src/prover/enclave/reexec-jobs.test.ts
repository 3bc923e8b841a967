import { MessageChannel } from 'node:worker_threads';
import { keccak256, toHex, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { packWitness, unpackWitness, type ToWorker } from './reexec-jobs.ts';

/** What crosses to a re-execution thread arrives as it left: through a real MessagePort (structured clone). */
const across = <T>(message: T): Promise<T> =>
  new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port2.once('message', (received: T) => {
      port1.close();
      port2.close();
      resolve(received);
    });
    port1.postMessage(message);
  });

describe('re-execution thread messages', () => {
  it('a witness crosses packed and unpacks to the same map, empty and large values included', async () => {
    const values = [new Uint8Array(0), Uint8Array.of(0x80), new Uint8Array(70_000).map((_, i) => i % 251), Uint8Array.of(1, 2, 3)];
    const witness = new Map<Hex, Uint8Array>(values.map((value) => [keccak256(value), value]));
    const message: ToWorker = { type: 'witness', session: 1, config: {} as never, witness: packWitness(witness) };
    const received = await across(message);
    if (received.type !== 'witness') throw new Error('type');
    const unpacked = unpackWitness(received.witness);
    expect([...unpacked.keys()]).toEqual([...witness.keys()]);
    for (const [key, value] of witness) expect(Buffer.from(unpacked.get(key)!).equals(Buffer.from(value))).toBe(true);
  });

  it('a block job keeps its bigints and hex strings', async () => {
    const job: ToWorker = {
      type: 'block',
      id: 7,
      session: 1,
      number: 12,
      parentRlp: '0xc0',
      rlp: '0xc1',
      derived: {
        timestamp: 1_764_691_201n,
        prevRandao: keccak256('0x01'),
        feeRecipient: '0x4200000000000000000000000000000000000011',
        gasLimit: 2n ** 60n + 1n,
        minBaseFee: 10n ** 18n,
        eip1559Params: toHex(250n << 32n, { size: 8 }),
        transactions: ['0x7e00'],
      },
    };
    const received = await across(job);
    expect(received).toEqual(job);
    expect(received.type === 'block' && typeof received.derived!.gasLimit).toBe('bigint');
  });
});
