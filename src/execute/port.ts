import type { AssembledBlock } from '../chain/assemble.ts';
import type { ExecutionOutput, ExecutorKind } from '../chain/execution.ts';

/**
 * The Executor port: for each accepted flashblock, the receipts of its new transactions and the
 * state diff of the block so far. Adapters: `local` (EDR over forked upstream state), `metadata`
 * (era A/B receipts in the feed), `node` (a flashblocks-aware upstream's pending receipts).
 *
 * It is an invariant that `execute` is called in feed order: index 0 of a block, then 1, 2, ...;
 * a new block (or a rebuild after a reorg) starts again at the block's first transaction.
 */
export type { ExecutionOutput };

export interface Executor {
  readonly kind: ExecutorKind;
  execute(block: AssembledBlock): Promise<ExecutionOutput>;
  /** Block N is canonical: state at or below N can be dropped. */
  onCanonical?(blockNumber: bigint): void;
  /** Canonical block N differs from its pre-confirmation: pending state at or above N is wrong. */
  onReorg?(blockNumber: bigint): void;
  close(): Promise<void>;
}
