/** The OP Stack fork ladder at genesis, for test chains: src/devnet/op-geth/genesis.ts. */
export { forksAtGenesis, type SharedFork } from '../../src/devnet/op-geth/genesis.ts';
