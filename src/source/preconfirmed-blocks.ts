import type { AssembledBlock } from '../chain/assemble.ts';
import { withExecutedLogs } from '../chain/canonical-follow.ts';
import type { ExecutionOutput } from '../chain/execution-output.ts';
import { initialReconcileState, reconcileStep, type ReconcileEvent, type ReconcileInput, type ReconcileState } from '../chain/reconcile.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, type Registry } from '../obs/metrics.ts';

/**
 * The pre-confirmed blocks a canonical-heads source compares canonical blocks with
 * (src/chain/reconcile.ts holds the rules): each block's transactions, recorded before it is
 * executed, and its logs once executed; the executions in flight, so a canonical block is compared
 * only once its logs are known. Counts what reconciling yields, and logs each reorg once.
 */
export type Reconciled = Exclude<ReconcileEvent, { type: 'dropped' }>;

export interface PreconfirmedBlocks {
  /** Records the block's transactions as its execution starts, then the logs `output` finds. */
  executing(block: AssembledBlock, output: Promise<ExecutionOutput>): void;
  /** Settles once block `n`'s execution in flight (if any) has. */
  executed(n: bigint): Promise<void> | undefined;
  /** Applies one input; returns the sealed / reorg events (dropped ones are only counted). */
  apply(input: ReconcileInput): Reconciled[];
  state(): ReconcileState;
}

const lower = (hash: string) => hash.toLowerCase() as `0x${string}`;

export function createPreconfirmedBlocks(options: { readonly logger: Logger; readonly metrics: Registry }): PreconfirmedBlocks {
  const { logger, metrics } = options;
  const reconciled = counter(metrics, 'flashlog_reconcile_total', 'canonical blocks compared with their pre-confirmation, by result', [
    'result',
  ]);
  const removedLogs = counter(metrics, 'flashlog_reconcile_removed_logs_total', 'removed: true log copies published after reorgs');
  const droppedPending = counter(metrics, 'flashlog_reconcile_dropped_total', 'pre-confirmed blocks dropped unreconciled, by reason', [
    'reason',
  ]);
  let state = initialReconcileState(3);
  /** Executions in flight by block: a canonical block is compared once its logs are known. */
  const executions = new Map<bigint, Promise<void>>();

  /** Applies one input; counts what it yields and returns the sealed / reorg events. */
  const apply = (input: ReconcileInput): Reconciled[] => {
    const result = reconcileStep(state, input);
    state = result.state;
    const kept: Reconciled[] = [];
    for (const event of result.events) {
      if (event.type === 'dropped') {
        droppedPending.inc({ reason: event.reason });
        continue;
      }
      reconciled.inc({ result: event.type });
      if (event.type === 'reorg') {
        logger.warn(
          {
            block: Number(BigInt(event.record.blockNumber)),
            removedTransactions: event.record.type === 'reorg' ? event.record.removedTransactions.length : 0,
            removedLogs: event.removedLogs.length,
          },
          'reorg: canonical block differs from its pre-confirmation',
        );
        removedLogs.inc(event.removedLogs.length);
      }
      kept.push(event);
    }
    return kept;
  };

  /** Records the block's transactions at once, then the logs `output` finds (none when it fails). */
  function executing(block: AssembledBlock, output: Promise<ExecutionOutput>): void {
    // The transaction list first: a canonical head polled during execution must find it, and
    // wait for the logs (see `executions`).
    apply({
      type: 'preconfirmed',
      blockNumber: block.blockNumber,
      index: block.index,
      firstNew: block.firstNew,
      transactions: block.transactions.map((tx) => lower(tx.hash)),
      newLogs: [],
    });
    const settled = output.then(
      (result) => {
        state = withExecutedLogs(
          state,
          block.blockNumber,
          result.receipts.flatMap((receipt) => receipt.logs),
        );
      },
      () => undefined,
    );
    executions.set(block.blockNumber, settled);
    void settled.finally(() => {
      if (executions.get(block.blockNumber) === settled) executions.delete(block.blockNumber);
    });
  }

  return { executing, executed: (n) => executions.get(n), apply, state: () => state };
}
