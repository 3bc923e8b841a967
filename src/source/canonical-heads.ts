import { EMPTY, Observable, ignoreElements, merge, share, takeUntil, tap } from 'rxjs';
import { z } from 'zod';
import { catchUpRange, outageStep, waitForPrefix, type Outage } from '../chain/canonical-follow.ts';
import { needsLogs, type ReconcileState } from '../chain/reconcile.ts';
import { errorMessage } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, type Registry } from '../obs/metrics.ts';
import { hash32 } from '../schemas/hex.ts';
import { rpcLogSchema, type RpcLog } from '../records/logs.ts';
import type { SourceEvent, SourceExecution } from './port.ts';
import { createPreconfirmedBlocks, type Reconciled } from './preconfirmed-blocks.ts';

/**
 * The canonical heads of a flashblocks chain, reconciled with its pre-confirmations: polls the
 * upstream's head every `pollMs` and compares each canonical block with what was pre-confirmed and
 * executed for its height (src/chain/reconcile.ts), under the rules of src/chain/canonical-follow.ts
 * (catch-up window, prefix grace, outages). The flashblocks source (create.ts) merges the events
 * into its own and feeds the numbers to its sequencer (held flashblocks are released).
 *
 *   poll eth_blockNumber -> eth_getBlockByNumber (+ eth_getLogs when the lists differ) -> reconcileStep
 *        -> steps$: one step per canonical block: lifecycle canonical (sealing its pre-confirmation,
 *           when one was held) or replaced (a reorg: the pre-confirmed logs it does not hold withdrawn)
 *
 * A pre-confirmed block is recorded when its execution starts (`executions$`, from the ingest, read
 * while `steps$` is subscribed), so a canonical head polled while the executor works does not look
 * like a reorg: the poll waits for the execution in flight. A canonical block that merely extends the pre-confirmed list (its
 * last flashblocks are still on the way) is looked at again at the next poll, for up to `prefixGraceMs`.
 *
 * The upstream may be down: a failed poll is counted and logged once, and the next poll starts
 * where the last good one ended. No canonical block is skipped, at most the last 16 are fetched.
 */
export interface CanonicalHeadsOptions {
  readonly rpc: Upstream;
  /** 0 turns polling off. */
  readonly pollMs: number;
  readonly prefixGraceMs: number;
  /** Each execution as it starts: the block's transactions are recorded, then the logs it finds. */
  readonly executions$?: Observable<SourceExecution> | undefined;
  /** Emits at shutdown: polling stops and `steps$` completes. */
  readonly stop$: Observable<unknown>;
  readonly logger: Logger;
  readonly metrics: Registry;
}

/** One canonical block reconciled, as the Source events it yields. */
export interface CanonicalStep {
  readonly blockNumber: bigint;
  readonly events: readonly SourceEvent[];
}

export interface CanonicalHeads {
  /**
   * One step per canonical block, in order; polls and reads `executions$` while subscribed
   * (shared), completes at `stop$`.
   */
  readonly steps$: Observable<CanonicalStep>;
  /** Reconciliation state, for tests and stats. */
  state(): ReconcileState;
}

const blockSchema = z.object({ number: z.string(), hash: hash32, transactions: z.array(hash32) });
const lower = (hash: string) => hash.toLowerCase() as `0x${string}`;

/** The Source event of canonical block `n` (hash `hash`) reconciled: sealed, replaced, or merely canonical. */
export function canonicalEvent(n: bigint, hash: `0x${string}`, reconciled: Reconciled | undefined): SourceEvent {
  if (reconciled?.type === 'reorg' && reconciled.record.type === 'reorg') {
    const { record } = reconciled;
    return {
      type: 'replaced',
      blockNumber: n,
      replacedHash: null,
      byHash: record.blockHash as `0x${string}`,
      transactions: record.transactions as `0x${string}`[],
      removedTransactions: record.removedTransactions as `0x${string}`[],
      index: reconciled.index,
      removedLogs: reconciled.removedLogs.map(({ v: _v, index: _index, ...log }) => log),
    };
  }
  if (reconciled?.type === 'sealed' && reconciled.record.type === 'sealed') {
    const { record } = reconciled;
    return {
      type: 'lifecycle',
      level: 'canonical',
      blockNumber: n,
      blockHash: record.blockHash as `0x${string}`,
      sealedTransactions: record.transactions as `0x${string}`[],
    };
  }
  return { type: 'lifecycle', level: 'canonical', blockNumber: n, blockHash: hash };
}

export function createCanonicalHeads(options: CanonicalHeadsOptions): CanonicalHeads {
  const { logger, metrics, rpc } = options;
  const upstreamErrors = counter(metrics, 'flashlog_upstream_errors_total', 'failed upstream RPC requests, by purpose', ['purpose']);
  const canonicalHead = gauge(metrics, 'flashlog_canonical_block_number', 'latest canonical block reconciled');
  const book = createPreconfirmedBlocks({ logger, metrics });
  let stopped = false;
  const deferredSince = new Map<bigint, number>();
  let outage: Outage = null;
  let last: bigint | null = null;

  /** Reads canonical block `n` (and its logs when needed); null when it should wait for the next poll. */
  async function readCanonical(n: bigint): Promise<{ hash: `0x${string}`; transactions: `0x${string}`[]; logs?: RpcLog[] } | null> {
    const block = blockSchema.parse(await rpc.call('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]));
    const transactions = block.transactions.map(lower);
    if (!needsLogs(book.state(), { number: n, transactions })) return { hash: block.hash as `0x${string}`, transactions };
    const since = deferredSince.get(n) ?? Date.now();
    if (waitForPrefix(book.state().pending.get(n)!.transactions, transactions, since, Date.now(), options.prefixGraceMs)) {
      // The last flashblocks of N are probably still on their way: look again next poll.
      deferredSince.set(n, since);
      return null;
    }
    const logs = z
      .array(rpcLogSchema.partial({ blockTimestamp: true, removed: true }))
      .parse(await rpc.call('eth_getLogs', [{ blockHash: block.hash }])) as RpcLog[];
    return { hash: block.hash as `0x${string}`, transactions, logs };
  }

  async function poll(emit: (step: CanonicalStep) => void): Promise<void> {
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
        block = await readCanonical(n);
        if (!block) return;
      } catch (error) {
        upstreamErrors.inc({ purpose: 'canonical' });
        logger.warn({ block: Number(n), err: errorMessage(error) }, 'could not read a canonical block; retrying at the next poll');
        return;
      }
      deferredSince.delete(n);
      await book.executed(n);
      const [reconciled] = book.apply({ type: 'canonical', block: { number: n, ...block } });
      last = n;
      canonicalHead.set(Number(n));
      emit({ blockNumber: n, events: [canonicalEvent(n, block.hash, reconciled)] });
    }
  }

  const polled$ = new Observable<CanonicalStep>((subscriber) => {
    if (options.pollMs === 0) return undefined;
    let timer: NodeJS.Timeout | undefined;
    stopped = false;
    const tick = () => {
      if (stopped) return;
      poll((step) => subscriber.next(step))
        .catch((error: unknown) => logger.error({ err: errorMessage(error) }, 'canonical poll failed'))
        .finally(() => {
          if (!stopped) timer = setTimeout(tick, options.pollMs);
        });
    };
    tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  });
  // Executions first: one told as the first poll starts is recorded before that poll compares.
  const recorded$ = (options.executions$ ?? EMPTY).pipe(
    tap(({ block, output }) => book.executing(block, output)),
    ignoreElements(),
  );
  const steps$ = merge(recorded$, polled$).pipe(takeUntil(options.stop$), share());

  return { steps$, state: book.state };
}
