/** The OP Stack forks shared by every ladder, oldest first (src/evm/op/rollup-config.ts). */
const ladder = ['regolith', 'canyon', 'delta', 'ecotone', 'fjord', 'granite', 'holocene', 'isthmus', 'jovian'] as const;
export type SharedFork = (typeof ladder)[number];

/**
 * A rollup config's fork times with every fork from Regolith through `through` active at genesis
 * (time 0), for test chains.
 *
 * @example parseRollupConfig({ l2_chain_id: 901, block_time: 2, ...forksAtGenesis('isthmus'), chain_op_config })
 */
export function forksAtGenesis(through: SharedFork): Partial<Record<`${SharedFork}_time`, number>> {
  return Object.fromEntries(ladder.slice(0, ladder.indexOf(through) + 1).map((fork) => [`${fork}_time`, 0]));
}
