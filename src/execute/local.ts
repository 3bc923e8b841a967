import type { AssembledBlock } from '../chain/assemble.ts';
import { errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, histogram, type Registry } from '../obs/metrics.ts';
import type { EdrCaller } from '../evm/edr.ts';
import { ExecutionError } from './execution-error.ts';
import { createForkCache, type ForkCache } from './fork-cache.ts';
import { createForkLifecycle } from './local-fork.ts';
import { check, mineBlockSoFar, type MinedHeader, type Pending } from './local-mining.ts';
import { accountsStateDiff, emptyTouched, scratchTouched, storageStateDiff, tracedStateDiff, type Touched } from './local-state-diff.ts';
import type { ExecutionOutput, Executor } from './port.ts';
import { pendingReceipt } from './pending-receipt.ts';

export { ExecutionError } from './execution-error.ts';

/**
 * The `local` executor: EDR (OP chain type) over state forked from the upstream RPC.
 *
 * One fork carries the pending chain. Block N is mined on top of the pending N-1 the fork already
 * holds (as Base's node keeps its bundle state across pending blocks), so a new block never waits
 * for its parent to become canonical upstream. Within a block, each flashblock re-mines the block
 * so far from a snapshot taken at the parent:
 *
 *   revert(snapshot) -> send the new raw txs (FIFO mempool) -> snapshot -> set env from `base`
 *   -> mine -> read the new receipts and the block header -> check gas_used, receipts_root
 *
 * The mined block is left in place, so the next block chains on it. The fork is rebuilt from
 * canonical state (a fresh fork at the canonical parent, reads served by the fork cache) when:
 * the first block arrives; a block does not follow the pending one; a flashblock does not follow
 * the last one (a replay after a reorg starts at transaction 0); `onReorg` says the pending chain
 * is wrong; the fork has carried `maxChainedBlocks` blocks or `maxForkTransactions` transactions
 * (the old fork is then freed when the next flashblock starts, see releaseReplaced in
 * local-fork.ts); or a check fails. A check that still fails after a rebuild is reported and the
 * receipts are returned as computed.
 *
 * It is an invariant that calls are serialized: `execute` runs one at a time (ingest concatMaps).
 *
 * The pieces: the fork's lifecycle in local-fork.ts, mining the block so far in local-mining.ts,
 * the state diff in local-state-diff.ts; here, what decides between them.
 */
export type StateDiffMode = 'storage' | 'accounts' | 'full' | 'none';

export interface LocalExecutorOptions {
  readonly upstreamUrl: string;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly metrics: Registry;
  /** OP hardfork for EDR (default 'isthmus'). */
  readonly hardfork?: string;
  /**
   * The state diff of the block so far:
   * - `storage` (default): balance, nonce, code and every changed storage slot of every account the
   *   new transactions touched (internal calls included). Which accounts and slots: each new
   *   transaction traced alone in a scratch block (scratchTouched in local-state-diff.ts), O(1)
   *   per transaction; their values: read from the mined block.
   * - `accounts`: balance, nonce and code of every account the new transactions touched
   *   visibly (sender, recipient, created contract, log emitters, fee recipient and OP fee vaults),
   *   read from the mined block; no storage slots.
   * - `full`: every touched account and every changed storage slot, from EDR's prestate tracer
   *   (diff mode) per transaction. EDR replays the block up to each traced transaction and
   *   re-reads forked state for it, so this costs O(n^2) per block: see bench/executor.ts.
   * - `none`: no state diff (null).
   */
  readonly stateDiff?: StateDiffMode;
  /** How long to wait for the canonical parent to appear upstream before a rebuild fails. */
  readonly parentWaitMs?: number;
  /**
   * Re-fork from canonical state after this many chained blocks (default 32), or once the fork
   * has executed `maxForkTransactions` (default 1000), whichever comes first. A fork only grows:
   * EDR keeps every block it mined until the provider is dropped, and a state for every mine and
   * pin in its state cache, which is bounded (FORK_MAX_CACHED_STATES, edr.ts). Before that bound a
   * fork grew by about 0.1 MB per executed transaction on the devnet workload (measured), and these
   * limits held it to ~100-300 MB.
   */
  readonly maxChainedBlocks?: number;
  readonly maxForkTransactions?: number;
}

export interface LocalExecutor extends Executor {
  readonly kind: 'local';
  readonly forkCache: ForkCache | null;
  /** Totals since start, for benchmarks and stats lines. */
  readonly totals: { gasUsed: bigint; transactions: number; checks: number; mismatches: number; rebuilds: number };
}

function executorMetrics(metrics: Registry) {
  return {
    checks: counter(
      metrics,
      'flashlog_executor_checks_total',
      'flashblocks checked against the feed (gas_used, receipts_root), by result',
      ['result'],
    ),
    mismatches: counter(metrics, 'flashlog_executor_mismatches_total', 'checks that failed, by field', ['field']),
    rebuilds: counter(metrics, 'flashlog_executor_rebuilds_total', 'forks rebuilt from canonical state, by reason', ['reason']),
    duration: histogram(
      metrics,
      'flashlog_executor_duration_seconds',
      'execution of one flashblock',
      ['kind'],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    ),
    gasTotal: counter(metrics, 'flashlog_executor_gas_total', 'gas of executed transactions', ['kind']),
    cacheGauge: gauge(
      metrics,
      'flashlog_executor_fork_cache',
      'fork cache: hits, misses, shared in-flight reads, upstream requests, answers held',
      ['stat'],
    ),
    forksAlive: gauge(
      metrics,
      'flashlog_executor_forks_alive',
      'EDR forks not yet freed, the current one included (1-2 when replaced forks are released)',
      [],
    ),
  };
}

/** Counts a check; on a first failure, says so and returns the reason to rebuild. */
function verdict(
  context: { totals: LocalExecutor['totals']; metrics: ReturnType<typeof executorMetrics>; logger: Logger },
  block: AssembledBlock,
  mined: MinedHeader,
  attempt: number,
): string | null {
  const { totals, logger } = context;
  const { checks, mismatches } = context.metrics;
  const failed = check(block, mined);
  totals.checks++;
  if (failed.length === 0) {
    checks.inc({ result: 'match' });
    return null;
  }
  totals.mismatches++;
  checks.inc({ result: 'mismatch' });
  for (const field of failed) mismatches.inc({ field });
  logger.warn(
    {
      block: Number(block.blockNumber),
      index: block.index,
      fields: failed,
      attempt,
      expected: { gasUsed: block.header.gasUsed, receiptsRoot: block.header.receiptsRoot, transactions: block.transactions.length },
      got: { gasUsed: mined.gasUsed, receiptsRoot: mined.receiptsRoot, transactions: mined.transactions.length },
    },
    attempt === 0
      ? 'executed flashblock does not match the feed; rebuilding from canonical state'
      : 'executed flashblock still does not match the feed after a rebuild',
  );
  return attempt === 0 ? `mismatch: ${failed.join(',')}` : null;
}

/** The fork cache's counters and the forks alive, as gauges (after every flashblock). */
function reportForks(
  counters: ReturnType<typeof executorMetrics>,
  forkCache: Awaited<ReturnType<typeof createForkCache>>,
  alive: number,
): void {
  const { cacheGauge, forksAlive } = counters;
  cacheGauge.set({ stat: 'hits' }, forkCache.stats.hits);
  cacheGauge.set({ stat: 'misses' }, forkCache.stats.misses);
  cacheGauge.set({ stat: 'shared' }, forkCache.stats.shared);
  cacheGauge.set({ stat: 'upstream_requests' }, forkCache.stats.upstreamRequests);
  cacheGauge.set({ stat: 'answers' }, forkCache.cachedAnswers());
  forksAlive.set(alive);
}

export async function createLocalExecutor(options: LocalExecutorOptions): Promise<LocalExecutor> {
  const { logger } = options;
  const stateDiffMode = options.stateDiff ?? 'storage';
  const maxChainedBlocks = options.maxChainedBlocks ?? 32;
  const maxForkTransactions = options.maxForkTransactions ?? 1000;
  const counters = executorMetrics(options.metrics);
  const { rebuilds, duration, gasTotal } = counters;

  const forkCache = await createForkCache({ upstreamUrl: options.upstreamUrl, timeoutMs: options.timeoutMs });
  const forks = createForkLifecycle({
    forkCache,
    timeoutMs: options.timeoutMs,
    parentWaitMs: options.parentWaitMs ?? 5000,
    hardfork: options.hardfork,
    logger,
  });
  let pending: Pending | null = null;
  let dirty: string | null = 'first block';
  const totals = { gasUsed: 0n, transactions: 0, checks: 0, mismatches: 0, rebuilds: 0 };

  /** A fresh fork at canonical `parent`; the pending chain is gone with the old one. */
  async function refork(parent: bigint, reason: string): Promise<EdrCaller> {
    pending = null;
    const fork = await forks.replace(parent, reason);
    dirty = null;
    totals.rebuilds++;
    rebuilds.inc({ reason: reason.split(':')[0]! });
    return fork.caller;
  }

  /** Brings the fork to the state where `block` can be mined; returns the pending entry. */
  async function prepare(block: AssembledBlock): Promise<{ caller: EdrCaller; state: Pending }> {
    const parent = block.blockNumber - 1n;
    const current = pending as Pending | null;
    const fork = forks.current();
    let reason: string | null = dirty;
    if (!reason && !fork) reason = 'first block';
    if (!reason && current && current.blockNumber === block.blockNumber) {
      if (block.firstNew !== current.txCount)
        reason = `replay: flashblock ${block.index} starts at tx ${block.firstNew}, ${current.txCount} already executed`;
      else return { caller: fork!.caller, state: current };
    }
    if (!reason) {
      const head = current ? current.blockNumber : fork!.forkedAt;
      if (head !== parent) reason = `discontinuity: block ${block.blockNumber} does not follow ${head}`;
      else if (block.firstNew !== 0) reason = `discontinuity: block ${block.blockNumber} starts at tx ${block.firstNew}`;
      else if (fork!.chained >= maxChainedBlocks || fork!.transactions >= maxForkTransactions) reason = 'refresh';
    }
    const caller = reason ? await refork(parent, reason) : fork!.caller;
    const state: Pending = { blockNumber: block.blockNumber, txCount: 0, snapshot: null, diff: new Map(), mined: null };
    if (!reason && current?.snapshot) {
      // The previous block is final on this fork: drop its snapshot, or EDR keeps it (with a copy
      // of the fork's irregular state, which grows with every pin) until the fork is dropped.
      await forks.releaseSnapshots(caller);
      current.snapshot = null;
    }
    pending = state;
    forks.current()!.chained++;
    return { caller, state };
  }

  /** Once more from canonical state, whole block; the flashblock's own receipts are returned. */
  function rebuild(block: AssembledBlock, reason: string): Promise<ExecutionOutput> {
    dirty = reason;
    return run({ ...block, firstNew: 0 }, 1).then((output) => ({ ...output, receipts: output.receipts.slice(block.firstNew) }));
  }

  async function run(block: AssembledBlock, attempt: number): Promise<ExecutionOutput> {
    const { caller, state } = await prepare(block);
    let mined: MinedHeader;
    // `storage`: the new transactions' keys, traced on a scratch chain over the block as last mined.
    let touched: Touched | null = null;
    try {
      if (stateDiffMode === 'storage' && !(state.mined && block.transactions.length === state.txCount))
        touched = await scratchTouched(caller, block, block.transactions.slice(state.txCount), logger);
      // Nothing new since the last flashblock: the block is the one already mined (mining it again
      // would cost CPU, and memory that EDR keeps until the fork is dropped).
      mined =
        state.mined && block.transactions.length === state.txCount
          ? state.mined
          : await mineBlockSoFar(caller, block, state, attempt, forks.pinRequested);
      state.mined = mined;
    } catch (error) {
      if (attempt > 0 || !(error instanceof ExecutionError)) throw error;
      // Refused by the engine (nonce too low after a reorg the executor has not heard of yet, for
      // instance): the pending chain is wrong.
      logger.warn(
        { block: Number(block.blockNumber), index: block.index, err: error.message },
        'engine refused a transaction; rebuilding from canonical state',
      );
      return rebuild(block, `refused: ${error.message.slice(0, 60)}`);
    }
    const mismatch = verdict({ totals, metrics: counters, logger }, block, mined, attempt);
    if (mismatch) return rebuild(block, mismatch);
    const fresh = block.transactions.slice(block.firstNew);
    const raws = await caller.batch<Record<string, unknown> | null>(fresh.map((tx) => ['eth_getTransactionReceipt', [tx.hash]] as const));
    const receipts = raws.map((raw, i) => {
      if (!raw) throw new ExecutionError(`block ${block.blockNumber} index ${block.index}: no receipt for ${fresh[i]!.hash} after mining`);
      return pendingReceipt(raw, block);
    });
    if (stateDiffMode === 'full') await tracedStateDiff(caller, state.diff, receipts);
    else if (stateDiffMode === 'storage') await storageStateDiff(caller, block, state.diff, receipts, touched ?? emptyTouched());
    else if (stateDiffMode === 'accounts') await accountsStateDiff(caller, block, state.diff, receipts);
    let gas = 0n;
    for (const receipt of receipts) gas += BigInt(receipt.gasUsed);
    totals.gasUsed += gas;
    totals.transactions += receipts.length;
    const fork = forks.current();
    if (fork) fork.transactions += receipts.length;
    gasTotal.inc({ kind: 'local' }, Number(gas));
    return { receipts, stateDiff: stateDiffMode === 'none' ? null : Object.fromEntries(state.diff) };
  }

  return {
    kind: 'local',
    forkCache,
    totals,
    async execute(block) {
      const end = duration.startTimer({ kind: 'local' });
      // Forks replaced during the previous flashblock: nothing of it holds them any more.
      forks.releaseReplaced();
      try {
        return await run(block, 0);
      } catch (error) {
        // The fork may hold a half-applied flashblock: start the next one from canonical state.
        dirty = `error: ${errorMessage(error).slice(0, 80)}`;
        throw error;
      } finally {
        end();
        reportForks(counters, forkCache, forks.alive());
      }
    },
    onCanonical() {
      // The pending chain stays valid while canonical blocks match it; nothing to drop.
    },
    onReorg(blockNumber: bigint) {
      const fork = forks.current();
      if (pending && pending.blockNumber >= blockNumber) dirty = `reorg: block ${blockNumber}`;
      else if (fork && fork.forkedAt < blockNumber) dirty = `reorg: block ${blockNumber}`;
    },
    async close() {
      forks.drop();
      pending = null;
      await forkCache.close();
    },
  };
}
