/** The derived test chain's sequencer: devnet/op-geth/sequencer.ts, which `flashlog devnet --op-geth` runs too. */
export { createSequencer, type DerivedL2Block, type Sequencer } from '../../devnet/op-geth/sequencer.ts';
