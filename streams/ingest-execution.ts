import { Subject, type Observable } from 'rxjs';
import type { ReconcileState } from '../src/chain/reconcile.ts';
import type { Context } from '../src/context.ts';
import { createExecutor, type ExecutorKind } from '../src/execute/create.ts';
import type { Executor } from '../src/execute/port.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import type { Publisher } from '../src/log/publisher.ts';
import { createCanonicalHeads } from '../src/source/canonical-heads.ts';
import { reconciledRecords } from '../src/source/event-records.ts';

/**
 * Execution and reconciliation, composed into the flashblocks ingest:
 *
 *   ingest --execute(block)--> heads.execute (records the block) --> the chosen adapter (local|metadata|node)
 *
 *   --rpc canonical heads (src/source/canonical-heads.ts) --> flashlog.chain (sealed|reorg)
 *                                                         --> flashlog.logs (removed: true copies)
 *                                                         --> executor.onCanonical / onReorg
 *                                                         --> canonical$ (the sequencer releases held flashblocks)
 */
export interface Execution {
  /** The executor ingest calls (records what it sees for reconciliation). */
  readonly executor: Executor;
  /** Canonical head numbers; empty without --rpc. */
  readonly canonical$: Observable<bigint>;
  /** Starts following canonical heads; records go through the publisher. */
  start(publisher: Publisher): void;
  /** Reconciliation state, for tests and stats. */
  state(): ReconcileState;
  close(): Promise<void>;
}

export interface ExecutionDeps {
  readonly rpcUrl: string | undefined;
  readonly kind?: ExecutorKind;
  /** An executor to use instead of creating one from the settings (tests). */
  readonly executor?: Executor;
  readonly prefixGraceMs?: number;
}

export async function createExecution(ctx: Context, deps: ExecutionDeps): Promise<Execution> {
  const { config, logger, metrics } = ctx;
  const inner =
    deps.executor ??
    (await createExecutor(deps.kind ?? config.executor, {
      rpcUrl: deps.rpcUrl,
      timeoutMs: config.rpcTimeoutMs,
      logger,
      metrics,
      stateDiff: config.stateDiff,
    }));
  const heads = createCanonicalHeads({
    rpc: deps.rpcUrl ? createUpstream(deps.rpcUrl, { timeoutMs: config.rpcTimeoutMs }) : null,
    pollMs: config.canonicalPollMs,
    prefixGraceMs: deps.prefixGraceMs ?? 3000,
    signal: ctx.shutdown.signal,
    logger,
    metrics,
  });
  const executor: Executor = {
    get kind() {
      return inner.kind;
    },
    execute: (block) => heads.execute(block, () => inner.execute(block)),
    onCanonical: (n) => inner.onCanonical?.(n),
    onReorg: (n) => inner.onReorg?.(n),
    close: () => inner.close(),
  };
  const canonical$ = new Subject<bigint>();
  let publisher: Publisher | null = null;
  heads.canonical$.subscribe({
    next: ({ blockNumber, reconciled }) => {
      const records = reconciledRecords(reconciled);
      if (records.length > 0) publisher?.push(records);
      if (reconciled.some((event) => event.type === 'reorg')) executor.onReorg?.(blockNumber);
      else executor.onCanonical?.(blockNumber);
      canonical$.next(blockNumber);
    },
    complete: () => canonical$.complete(),
  });
  return {
    executor,
    canonical$: canonical$.asObservable(),
    state: () => heads.state(),
    start(sink) {
      publisher = sink;
      heads.start();
    },
    async close() {
      await heads.close();
      await inner.close();
    },
  };
}
