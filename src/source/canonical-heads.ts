import { Subject, type Observable } from 'rxjs';
import { z } from 'zod';
import type { AssembledBlock } from '../chain/assemble.ts';
import { catchUpRange, outageStep, waitForPrefix, withExecutedLogs, type Outage } from '../chain/canonical-follow.ts';
import type { ExecutionOutput } from '../chain/execution.ts';
import {
  initialReconcileState,
  needsLogs,
  reconcileStep,
  type ReconcileEvent,
  type ReconcileInput,
  type ReconcileState,
} from '../chain/reconcile.ts';
import { errorMessage } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, type Registry } from '../obs/metrics.ts';
import { hash32 } from '../schemas/hex.ts';
import { rpcLogSchema, type RpcLog } from '../schemas/records.ts';

/**
 * The canonical-heads source, beside a flashblocks feed: polls the upstream's head every `pollMs`
 * and reconciles each canonical block with its pre-confirmation (src/chain/reconcile.ts), under
 * the rules of src/chain/canonical-follow.ts (catch-up window, prefix grace, outages).
 *
 *   poll eth_blockNumber -> eth_getBlockByNumber (+ eth_getLogs when the lists differ) -> reconcileStep
 *        -> canonical$: one step per canonical block, with its sealed | reorg event (none when the
 *           feed missed the block)
 *
 * A pre-confirmed block is recorded when its flashblock reaches the executor, before execution
 * (`execute`), so a canonical head polled while the executor works does not look like a reorg:
 * the poll waits for the execution in flight. A canonical block that merely extends the
 * pre-confirmed list (its last flashblocks are still on the way) is looked at again at the next
 * poll, for up to `prefixGraceMs`.
 *
 * The upstream may be down: a failed poll is counted and logged once, and the next poll starts
 * where the last good one ended. No canonical block is skipped, at most the last 16 are fetched.
 */
export interface CanonicalHeadsOptions {
  /** The upstream to poll; null for none (nothing is polled, `execute` still records). */
  readonly rpc: Upstream | null;
  /** 0 turns polling off. */
  readonly pollMs: number;
  readonly prefixGraceMs: number;
  /** Aborted at shutdown: polling stops and `canonical$` completes. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly metrics: Registry;
}

/** One canonical block reconciled: `reconciled` holds its sealed or reorg event, if it was pre-confirmed. */
export interface CanonicalStep {
  readonly blockNumber: bigint;
  readonly reconciled: readonly Exclude<ReconcileEvent, { type: 'dropped' }>[];
}

export interface CanonicalHeads {
  /** One step per canonical block, in order; completes at shutdown or close. */
  readonly canonical$: Observable<CanonicalStep>;
  /** Records the block's transactions, runs `run` (its execution), then adds the logs it found. */
  execute(block: AssembledBlock, run: () => Promise<ExecutionOutput>): Promise<ExecutionOutput>;
  start(): void;
  /** Reconciliation state, for tests and stats. */
  state(): ReconcileState;
  close(): Promise<void>;
}

const blockSchema = z.object({ number: z.string(), hash: hash32, transactions: z.array(hash32) });
const lower = (hash: string) => hash.toLowerCase() as `0x${string}`;

export function createCanonicalHeads(options: CanonicalHeadsOptions): CanonicalHeads {
  const { logger, metrics } = options;
  const reconciled = counter(metrics, 'flashlog_reconcile_total', 'canonical blocks compared with their pre-confirmation, by result', [
    'result',
  ]);
  const removedLogs = counter(metrics, 'flashlog_reconcile_removed_logs_total', 'removed: true log copies published after reorgs');
  const droppedPending = counter(metrics, 'flashlog_reconcile_dropped_total', 'pre-confirmed blocks dropped unreconciled, by reason', [
    'reason',
  ]);
  const upstreamErrors = counter(metrics, 'flashlog_upstream_errors_total', 'failed upstream RPC requests, by purpose', ['purpose']);
  const canonicalHead = gauge(metrics, 'flashlog_canonical_block_number', 'latest canonical block reconciled');
  const canonical$ = new Subject<CanonicalStep>();
  let state = initialReconcileState(3);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let polling: Promise<void> = Promise.resolve();
  const deferredSince = new Map<bigint, number>();
  /** Executions in flight by block: a canonical block is compared once its logs are known. */
  const executing = new Map<bigint, Promise<void>>();
  let outage: Outage = null;
  let last: bigint | null = null;

  /** Applies one input; counts what it yields and returns the sealed / reorg events. */
  const apply = (input: ReconcileInput): CanonicalStep['reconciled'] => {
    const result = reconcileStep(state, input);
    state = result.state;
    const kept: CanonicalStep['reconciled'][number][] = [];
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

  async function execute(block: AssembledBlock, run: () => Promise<ExecutionOutput>): Promise<ExecutionOutput> {
    // The transaction list first: a canonical head polled during execution must find it, and
    // wait for the logs (see `executing`).
    apply({
      type: 'preconfirmed',
      blockNumber: block.blockNumber,
      index: block.index,
      firstNew: block.firstNew,
      transactions: block.transactions.map((tx) => lower(tx.hash)),
      newLogs: [],
    });
    const running = run();
    executing.set(
      block.blockNumber,
      running.then(
        () => undefined,
        () => undefined,
      ),
    );
    let output: ExecutionOutput;
    try {
      output = await running;
    } finally {
      executing.delete(block.blockNumber);
    }
    state = withExecutedLogs(
      state,
      block.blockNumber,
      output.receipts.flatMap((receipt) => receipt.logs),
    );
    return output;
  }

  /** Reads canonical block `n` (and its logs when needed); null when it should wait for the next poll. */
  async function readCanonical(
    rpc: Upstream,
    n: bigint,
  ): Promise<{ hash: `0x${string}`; transactions: `0x${string}`[]; logs?: RpcLog[] } | null> {
    const block = blockSchema.parse(await rpc.call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
    const transactions = block.transactions.map(lower);
    if (!needsLogs(state, { number: n, transactions })) return { hash: block.hash as `0x${string}`, transactions };
    const since = deferredSince.get(n) ?? Date.now();
    if (waitForPrefix(state.pending.get(n)!.transactions, transactions, since, Date.now(), options.prefixGraceMs)) {
      // The last flashblocks of N are probably still on their way: look again next poll.
      deferredSince.set(n, since);
      return null;
    }
    const logs = z
      .array(rpcLogSchema.partial({ blockTimestamp: true, removed: true }))
      .parse(await rpc.call('eth_getLogs', [{ blockHash: block.hash }])) as RpcLog[];
    return { hash: block.hash as `0x${string}`, transactions, logs };
  }

  async function poll(rpc: Upstream): Promise<void> {
    let head: bigint;
    try {
      head = BigInt(z.string().parse(await rpc.call('eth_blockNumber', [])));
    } catch (error) {
      upstreamErrors.inc({ purpose: 'canonical' });
      const step = outageStep(outage, false, Date.now());
      outage = step.outage;
      if (step.change)
        logger.warn({ err: errorMessage(error) }, 'upstream RPC unavailable; following canonical heads again once it answers');
      return;
    }
    const step = outageStep(outage, true, Date.now());
    outage = step.outage;
    if (step.change?.type === 'up') logger.info({ downMs: step.change.downMs }, 'upstream RPC answers again');
    const { from } = catchUpRange(last, head);
    for (let n = from; n <= head && !stopped; n++) {
      let block: Awaited<ReturnType<typeof readCanonical>>;
      try {
        block = await readCanonical(rpc, n);
        if (!block) return;
      } catch (error) {
        upstreamErrors.inc({ purpose: 'canonical' });
        logger.warn({ block: Number(n), err: errorMessage(error) }, 'could not read a canonical block; retrying at the next poll');
        return;
      }
      deferredSince.delete(n);
      await executing.get(n);
      const events = apply({ type: 'canonical', block: { number: n, ...block } });
      last = n;
      canonicalHead.set(Number(n));
      canonical$.next({ blockNumber: n, reconciled: events });
    }
  }

  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    canonical$.complete();
  };
  // The feed's sequencer completes once its inputs do: canonical heads end with shutdown.
  options.signal.addEventListener('abort', stop, { once: true });

  return {
    canonical$: canonical$.asObservable(),
    execute,
    state: () => state,
    start() {
      const rpc = options.rpc;
      if (!rpc || options.pollMs === 0) return;
      const tick = () => {
        if (stopped) return;
        polling = poll(rpc)
          .catch((error: unknown) => logger.error({ err: errorMessage(error) }, 'canonical poll failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(tick, options.pollMs);
          });
      };
      tick();
    },
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await polling;
      canonical$.complete();
    },
  };
}
