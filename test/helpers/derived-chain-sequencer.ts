/** The derived test chain's sequencer: src/devnet/op-geth/sequencer.ts, which `flashlog devnet --op-geth` runs too. */
export { createSequencer, type DerivedL2Block, type Sequencer } from '../../src/devnet/op-geth/sequencer.ts';
