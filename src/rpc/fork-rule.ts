import type { Upstream } from '../jsonrpc/upstream.ts';
import { knownRollupConfigs } from '../op/chains.ts';
import { rulesAt } from '../op/rollup-config.ts';
import type { PendingBlock } from '../view/state.ts';

/**
 * Whether a pending block is an Isthmus+ block (its header has `requestsHash`), without the
 * builder's hash of it: a subblocks feed zeroes `block_hash` (ethereum-optimism/specs
 * `specs/protocol/subblocks.md` @43a681ec), so the rebuilt header cannot be checked against it.
 * op-reth decides from its chain spec (`reth-optimism-flashblocks` builds the pending block with
 * the chain's EVM config, `src/worker.rs` @017b9d3f); flashlog does the same in two steps:
 * 1. the chain's fork schedule, when its rollup config is known by chain id (src/op/chains.ts:
 *    OP Mainnet and Sepolia, Unichain and Unichain Sepolia, Base, the devnet);
 * 2. else the sealed parent, as the upstream gives it: forks only ever switch on, so a parent with
 *    `requestsHash` has a child with one (wrong only for the first Isthmus block of an unknown
 *    chain, once in its history).
 * Undefined when neither answers (the upstream unreachable): the caller keeps its own rule.
 * The chain id is asked once (a failure is not kept); parents are kept for the last few blocks.
 *
 * @example const isthmusAt = createIsthmusRule(upstream); await isthmusAt(block) // true
 */
export function createIsthmusRule(upstream: Upstream): (block: PendingBlock) => Promise<boolean | undefined> {
  let chainId: Promise<number> | undefined;
  const parents = new Map<string, Promise<boolean | undefined>>();
  return async (block) => {
    chainId ??= upstream.call('eth_chainId', []).then(
      (id) => Number(BigInt(id as string)),
      (error: unknown) => {
        chainId = undefined;
        throw error;
      },
    );
    const config = knownRollupConfigs.get(await chainId.catch(() => -1));
    if (config) return rulesAt(config, BigInt(block.header.timestamp)).active('isthmus');
    const parentHash = block.header.parentHash.toLowerCase();
    let parent = parents.get(parentHash);
    if (!parent) {
      parent = upstream.call('eth_getBlockByHash', [parentHash, false]).then(
        (header) => (header && typeof header === 'object' ? 'requestsHash' in header : undefined),
        () => {
          parents.delete(parentHash);
          return undefined;
        },
      );
      parents.set(parentHash, parent);
      if (parents.size > 16) parents.delete(parents.keys().next().value!);
    }
    return parent;
  };
}
