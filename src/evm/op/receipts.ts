import type { ConsensusReceipt } from '../receipts.ts';

export { encodeReceipt, orBlooms, orderedTrieRoot, type ReceiptLog } from '../receipts.ts';

/** A receipt of the stateless executor: the consensus fields and what the sender paid. */
export interface Receipt extends ConsensusReceipt {
  readonly gasUsed: bigint;
  /** What the sender paid beyond gas (zero for deposits). */
  readonly l1Fee: bigint;
  readonly operatorFee: bigint;
  /** Lagoon: the Sequencer-Defined Metering refund taken off this transaction's gas (not in the consensus encoding). */
  readonly opGasRefund?: bigint | undefined;
}
