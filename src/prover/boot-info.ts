import { knownRollupConfigs } from '../op/chains.ts';

/**
 * What the host and the enclave agree on before any preimage is read: the local keys the host
 * writes the boot info under (the enclave reads them back), how far the enclave checks, and the
 * chain fact both sides need to pick the message-passer storage root.
 */
/** Local preimage keys of the boot info (kona `BootInfo`, Base's nitro enclave). */
export const bootKeys = {
  l1Head: 1,
  agreedOutputRoot: 2,
  claimedOutputRoot: 3,
  claimedBlockNumber: 4,
  chainId: 5,
  proposer: 8,
  intermediateBlockInterval: 9,
  l1HeadNumber: 10,
  /** base/base `L2_SCHEDULE_BLOCK_NUMBER_KEY`: the L2 block whose timestamp pins the scheduleId (optional; absent or 0 = the claimed block). */
  scheduleBlockNumber: 11,
  /** kona's boot key 6: the rollup config JSON, for a chain the enclave does not know by id. */
  rollupConfig: 6,
} as const;

/**
 * What Prove checks before signing: `derive` derives every L2 block of the range from the
 * request's L1 preimages and re-executes it from the derived transactions (the only check that
 * proves the chain, not just its execution); `reexecute` re-executes every L2 block of the range
 * from the request's preimages and requires its rebuilt header to hash to the block's hash; `headers`
 * only follows the hash-linked headers (for chains whose blocks cannot be executed, such as
 * synthetic test chains).
 */
export type EnclaveCheck = 'derive' | 'reexecute' | 'headers';

/**
 * When the L2 header's withdrawalsRoot became the message-passer storage root (Isthmus), by
 * chain id, as a unix timestamp: the built-in rollup configs' `isthmus_time`. Before it (or on a
 * chain not listed) the storage root must come from an account proof in the preimages.
 */
export const isthmusTime: ReadonlyMap<number, number> = new Map(
  [...knownRollupConfigs].flatMap(([chainId, rollup]) => (typeof rollup.isthmus_time === 'number' ? [[chainId, rollup.isthmus_time]] : [])),
);
