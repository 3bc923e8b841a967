import type { AccountDiff, RpcReceipt } from '../records/blocks.ts';

/**
 * What executing one flashblock yields, as the chain's records carry it. The Executor port that
 * produces it lives in src/execute/port.ts; the shape lives here so `chain/` never imports `execute/`.
 */
export interface ExecutionOutput {
  /** One receipt per new transaction (block.transactions.slice(block.firstNew)), in order. */
  readonly receipts: RpcReceipt[];
  /** Every account touched in the block so far; null when the adapter cannot know it. */
  readonly stateDiff: Record<string, AccountDiff> | null;
}

/** The Executor adapters: `local` (EDR), `metadata` (receipts in the feed), `node` (the upstream's pending receipts). */
export type ExecutorKind = 'local' | 'metadata' | 'node';
