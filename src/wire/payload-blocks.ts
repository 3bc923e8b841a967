/**
 * Which block each payload id builds, learnt from index-0 flashblocks. The OP-specs format carries
 * its block number only in `static` at index 0; its later indices are numbered by their payload
 * id (one payload id builds one block). Bounded: the last `capacity` payload ids are remembered.
 *
 * @example
 * const payloads = createPayloadBlocks();
 * payloads.remember('0x03997352d799c31a', 22585577);
 * payloads.blockOf('0x03997352d799c31a'); // 22585577
 */
export interface PayloadBlocks {
  remember(payloadId: string, blockNumber: number): void;
  blockOf(payloadId: string): number | undefined;
}

export function createPayloadBlocks(capacity = 64): PayloadBlocks {
  const blocks = new Map<string, number>();
  return {
    remember(payloadId, blockNumber) {
      const key = payloadId.toLowerCase();
      blocks.delete(key);
      blocks.set(key, blockNumber);
      if (blocks.size > capacity) blocks.delete(blocks.keys().next().value!);
    },
    blockOf: (payloadId) => blocks.get(payloadId.toLowerCase()),
  };
}
