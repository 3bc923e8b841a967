import type { RollupConfig } from './rollup-config.ts';

/**
 * Rollup configs flashlog knows by chain id, so the enclave does not take a chain's rules from
 * whoever sends the request. The devnet (EDR's OP chain type at Isthmus from genesis, EIP-1559
 * 50/250 and elasticity 6, as EDR builds its headers).
 */
export const devnetRollupConfig: RollupConfig = {
  l2_chain_id: 1337,
  block_time: 1,
  regolith_time: 0,
  canyon_time: 0,
  delta_time: 0,
  ecotone_time: 0,
  fjord_time: 0,
  granite_time: 0,
  holocene_time: 0,
  isthmus_time: 0,
  chain_op_config: { eip1559Elasticity: 6, eip1559Denominator: 50, eip1559DenominatorCanyon: 250 },
};

export const knownRollupConfigs: ReadonlyMap<number, RollupConfig> = new Map([[1337, devnetRollupConfig]]);
