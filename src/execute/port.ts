import type { AssembledBlock } from '../chain/assemble.ts';
import type { ExecutionOutput, ExecutorKind } from '../chain/execution-output.ts';

/**
 * src/execute/: the engine that executes pre-confirmed transactions as they arrive.
 *
 * Why EDR (Hardhat's Rust EVM, OP chain type): speed (a 200-transaction flashblock in tens of ms)
 * and fork mode (state read lazily from the upstream at the canonical parent, then chained block
 * after block on the fork), with OP receipts (deposits, L1 and operator fees) as op-reth gives them.
 * The devnet runs on the same EDR (one context per process, edr.ts).
 *
 * Why `eth_call` uses neither this engine nor src/simulate/: a call reads state the executor does
 * not hold (any contract's storage), so the gateway forwards it to the upstream node with the
 * pre-confirmed state diff laid under the caller's state overrides (src/rpc/pending-execution.ts).
 *
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
