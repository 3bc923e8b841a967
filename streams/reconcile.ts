import { Subject, type Observable } from 'rxjs';
import { z } from 'zod';
import type { AssembledBlock } from '../src/chain/assemble.ts';
import { catchUpRange, outageStep, waitForPrefix, withExecutedLogs, type Outage } from '../src/chain/canonical-follow.ts';
import {
  initialReconcileState,
  needsLogs,
  reconcileStep,
  type ReconcileEvent,
  type ReconcileInput,
  type ReconcileState,
} from '../src/chain/reconcile.ts';
import type { Context } from '../src/context.ts';
import { errorMessage } from '../src/errors.ts';
import { createExecutor, type ExecutorKind } from '../src/execute/create.ts';
import type { ExecutionOutput, Executor } from '../src/execute/port.ts';
import type { ProduceRecord } from '../src/log/port.ts';
import type { Publisher } from '../src/log/publisher.ts';
import { topics } from '../src/log/topics.ts';
import { counter, gauge } from '../src/obs/metrics.ts';
import { createUpstream, type Upstream } from '../src/jsonrpc/upstream.ts';
import { hash32 } from '../src/schemas/hex.ts';
import { rpcLogSchema, type RpcLog } from '../src/schemas/records.ts';

/**
 * Execution and reconciliation, composed into ingest:
 *
 *   ingest --execute(block)--> [recording executor] --> the chosen adapter (local|metadata|node)
 *                                     |  pre-confirmed tx list + published logs
 *                                     v
 *   --rpc canonical heads (poll) --> reconcileStep --> flashlog.chain (sealed|reorg)
 *                                                  --> flashlog.logs (removed: true copies)
 *                                                  --> canonical$ (the sequencer releases held flashblocks)
 *                                                  --> executor.onCanonical / onReorg
 *
 * A pre-confirmed block is recorded when its flashblock reaches the executor, before execution,
 * so a canonical head polled while the executor works does not look like a reorg. A canonical
 * block that merely extends the pre-confirmed list (its last flashblocks are still on the way) is
 * looked at again at the next poll, for up to `prefixGraceMs`.
 *
 * The upstream may be down: a failed poll is counted and logged once, and the next poll starts
 * where the last good one ended. No canonical block is skipped, at most the last 16 are fetched.
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

const blockSchema = z.object({ number: z.string(), hash: hash32, transactions: z.array(hash32) });

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
  const reconciled = counter(metrics, 'flashlog_reconcile_total', 'canonical blocks compared with their pre-confirmation, by result', [
    'result',
  ]);
  const removedLogs = counter(metrics, 'flashlog_reconcile_removed_logs_total', 'removed: true log copies published after reorgs');
  const droppedPending = counter(metrics, 'flashlog_reconcile_dropped_total', 'pre-confirmed blocks dropped unreconciled, by reason', [
    'reason',
  ]);
  const upstreamErrors = counter(metrics, 'flashlog_upstream_errors_total', 'failed upstream RPC requests, by purpose', ['purpose']);
  const canonicalHead = gauge(metrics, 'flashlog_canonical_block_number', 'latest canonical block reconciled');
  const prefixGraceMs = deps.prefixGraceMs ?? 3000;
  const canonical$ = new Subject<bigint>();
  let state = initialReconcileState(3);
  let publisher: Publisher | null = null;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let polling: Promise<void> = Promise.resolve();
  const deferredSince = new Map<bigint, number>();
  /** Executions in flight by block: a canonical block is compared once its logs are known. */
  const executing = new Map<bigint, Promise<void>>();
  let outage: Outage = null;

  const apply = (input: ReconcileInput): ReconcileEvent[] => {
    const result = reconcileStep(state, input);
    state = result.state;
    return result.events;
  };

  const publish = (events: readonly ReconcileEvent[]) => {
    const records: ProduceRecord[] = [];
    for (const event of events) {
      if (event.type === 'dropped') {
        droppedPending.inc({ reason: event.reason });
        continue;
      }
      reconciled.inc({ result: event.type });
      const key = BigInt(event.record.blockNumber).toString();
      records.push({ topic: topics.chain, key, value: JSON.stringify(event.record) });
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
        for (const log of event.removedLogs)
          records.push({ topic: topics.logs, key: log.address.toLowerCase(), value: JSON.stringify(log) });
      }
    }
    if (records.length > 0) publisher?.push(records);
  };

  /** Records the block's transactions so far; its logs are added once executed. */
  const recordBlock = (block: AssembledBlock) => {
    publish(
      apply({
        type: 'preconfirmed',
        blockNumber: block.blockNumber,
        index: block.index,
        firstNew: block.firstNew,
        transactions: block.transactions.map((tx) => tx.hash.toLowerCase() as `0x${string}`),
        newLogs: [],
      }),
    );
  };

  const executor: Executor = {
    get kind() {
      return inner.kind;
    },
    async execute(block) {
      // The transaction list first: a canonical head polled during execution must find it, and
      // wait for the logs (see `executing`).
      recordBlock(block);
      const running = inner.execute(block);
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
    },
    onCanonical: (n) => inner.onCanonical?.(n),
    onReorg: (n) => inner.onReorg?.(n),
    close: () => inner.close(),
  };

  let upstream: Upstream | null = deps.rpcUrl ? createUpstream(deps.rpcUrl, { timeoutMs: config.rpcTimeoutMs }) : null;
  let last: bigint | null = null;

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
      let block: z.output<typeof blockSchema>;
      let logs: RpcLog[] | undefined;
      try {
        block = blockSchema.parse(await rpc.call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
        const canonical = { number: n, transactions: block.transactions.map((hash) => hash.toLowerCase() as `0x${string}`) };
        if (needsLogs(state, canonical)) {
          const since = deferredSince.get(n) ?? Date.now();
          if (waitForPrefix(state.pending.get(n)!.transactions, canonical.transactions, since, Date.now(), prefixGraceMs)) {
            // The last flashblocks of N are probably still on their way: look again next poll.
            deferredSince.set(n, since);
            return;
          }
          logs = z
            .array(rpcLogSchema.partial({ blockTimestamp: true, removed: true }))
            .parse(await rpc.call('eth_getLogs', [{ blockHash: block.hash }])) as RpcLog[];
        }
      } catch (error) {
        upstreamErrors.inc({ purpose: 'canonical' });
        logger.warn({ block: Number(n), err: errorMessage(error) }, 'could not read a canonical block; retrying at the next poll');
        return;
      }
      deferredSince.delete(n);
      await executing.get(n);
      const events = apply({
        type: 'canonical',
        block: {
          number: n,
          hash: block.hash as `0x${string}`,
          transactions: block.transactions.map((hash) => hash.toLowerCase() as `0x${string}`),
          ...(logs ? { logs } : {}),
        },
      });
      publish(events);
      if (events.some((event) => event.type === 'reorg')) executor.onReorg?.(n);
      else executor.onCanonical?.(n);
      last = n;
      canonicalHead.set(Number(n));
      canonical$.next(n);
    }
  }

  // Ingest completes once its inputs do: canonical heads end with shutdown.
  ctx.shutdown.signal.addEventListener(
    'abort',
    () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      canonical$.complete();
    },
    { once: true },
  );

  return {
    executor,
    canonical$: canonical$.asObservable(),
    state: () => state,
    start(sink) {
      publisher = sink;
      if (!upstream || config.canonicalPollMs === 0) return;
      const rpc = upstream;
      const tick = () => {
        if (stopped) return;
        polling = poll(rpc)
          .catch((error: unknown) => logger.error({ err: errorMessage(error) }, 'canonical poll failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(tick, config.canonicalPollMs);
          });
      };
      tick();
    },
    async close() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await polling;
      upstream = null;
      canonical$.complete();
      await inner.close();
    },
  };
}
