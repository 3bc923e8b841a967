import { Subject, type Observable } from 'rxjs';
import { z } from 'zod';
import type { AssembledBlock } from '../chain/assemble.ts';
import { catchUpRange, outageStep, waitForPrefix, type Outage } from '../chain/canonical-follow.ts';
import type { ExecutionOutput } from '../chain/execution-output.ts';
import { needsLogs, type ReconcileState } from '../chain/reconcile.ts';
import { errorMessage } from '../errors.ts';
import type { Upstream } from '../jsonrpc/upstream.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, type Registry } from '../obs/metrics.ts';
import { hash32 } from '../schemas/hex.ts';
import { rpcLogSchema, type RpcLog } from '../records/logs.ts';
import { createPreconfirmedBlocks, type Reconciled } from './preconfirmed-blocks.ts';

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
  readonly reconciled: readonly Reconciled[];
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
  const upstreamErrors = counter(metrics, 'flashlog_upstream_errors_total', 'failed upstream RPC requests, by purpose', ['purpose']);
  const canonicalHead = gauge(metrics, 'flashlog_canonical_block_number', 'latest canonical block reconciled');
  const canonical$ = new Subject<CanonicalStep>();
  const book = createPreconfirmedBlocks({ logger, metrics });
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let polling: Promise<void> = Promise.resolve();
  const deferredSince = new Map<bigint, number>();
  let outage: Outage = null;
  let last: bigint | null = null;

  /** Reads canonical block `n` (and its logs when needed); null when it should wait for the next poll. */
  async function readCanonical(
    rpc: Upstream,
    n: bigint,
  ): Promise<{ hash: `0x${string}`; transactions: `0x${string}`[]; logs?: RpcLog[] } | null> {
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
      await book.executed(n);
      const events = book.apply({ type: 'canonical', block: { number: n, ...block } });
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
    execute: book.execute,
    state: book.state,
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
