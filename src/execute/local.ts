import type { AssembledBlock } from '../chain/assemble.ts';
import { FlashlogError, errorMessage } from '../errors.ts';
import type { Logger } from '../obs/logger.ts';
import { counter, gauge, histogram, type Registry } from '../obs/metrics.ts';
import type { AccountDiff, RpcReceipt } from '../schemas/records.ts';
import { createForkProvider, releaseDroppedProviders, type EdrCaller } from './edr.ts';
import { createForkCache, type ForkCache } from './fork-cache.ts';
import type { ExecutionOutput, Executor } from './port.ts';
import { pendingReceipt } from './receipts.ts';

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
 * is wrong; the fork has carried `maxChainedBlocks` blocks or `maxForkTransactions` transactions (the old fork
 * is then freed at once, see releaseDroppedProviders); or a check fails. A check that still fails
 * after a rebuild is reported and the receipts are returned as computed.
 *
 * It is an invariant that calls are serialized: `execute` runs one at a time (ingest concatMaps).
 */
export interface LocalExecutorOptions {
  readonly upstreamUrl: string;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly metrics: Registry;
  /** OP hardfork for EDR (default 'isthmus'). */
  readonly hardfork?: string;
  /**
   * The state diff of the block so far:
   * - `accounts` (default): balance, nonce and code of every account the new transactions touched
   *   visibly (sender, recipient, created contract, log emitters, fee recipient and OP fee vaults),
   *   read from the mined block; no storage slots.
   * - `full`: every touched account and every changed storage slot, from EDR's prestate tracer
   *   (diff mode) per transaction. EDR replays the block up to each traced transaction and
   *   re-reads forked state for it, so this costs O(n^2) per block: see bench/executor.ts.
   * - `none`: no state diff (null).
   */
  readonly stateDiff?: 'accounts' | 'full' | 'none';
  /** How long to wait for the canonical parent to appear upstream before a rebuild fails. */
  readonly parentWaitMs?: number;
  /**
   * Re-fork from canonical state after this many chained blocks (default 32), or once the fork
   * has executed `maxForkTransactions` (default 1000), whichever comes first. A fork only grows:
   * EDR keeps what every mine, revert and pin wrote (about 0.1 MB per executed transaction on the
   * devnet workload, measured) until the provider is dropped. These bound it to ~100-300 MB.
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

interface Pending {
  readonly blockNumber: bigint;
  /** Transactions sent to the fork's mempool for this block (and in the snapshot). */
  txCount: number;
  /** Snapshot at the parent with the block's transactions so far in the mempool; null once mined for good. */
  snapshot: string | null;
  /** Accumulated state of every account the block touched. */
  diff: Map<string, AccountDiff>;
  /** The block as last mined with `txCount` transactions (a flashblock with none new mines nothing). */
  mined: MinedHeader | null;
}

interface MinedHeader {
  number: `0x${string}`;
  gasUsed: `0x${string}`;
  receiptsRoot: `0x${string}`;
  logsBloom: `0x${string}`;
  transactions: `0x${string}`[];
}

interface PrestateDiff {
  pre: Record<string, { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> }>;
  post: Record<string, { balance?: string; nonce?: number | string; code?: string; storage?: Record<string, string> }>;
}

export class ExecutionError extends FlashlogError {
  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super('execution_failed', message, options);
  }
}

const L1_BLOCK = '0x4200000000000000000000000000000000000015';
/** OP fee vaults credited by every user transaction: base fee, L1 fee, operator fee. */
const FEE_VAULTS = [
  '0x4200000000000000000000000000000000000019',
  '0x420000000000000000000000000000000000001a',
  '0x420000000000000000000000000000000000001b',
];
const hexNumber = (value: bigint | number) => `0x${value.toString(16)}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function createLocalExecutor(options: LocalExecutorOptions): Promise<LocalExecutor> {
  const { logger, metrics } = options;
  const stateDiffMode = options.stateDiff ?? 'accounts';
  const parentWaitMs = options.parentWaitMs ?? 5000;
  const maxChainedBlocks = options.maxChainedBlocks ?? 32;
  const maxForkTransactions = options.maxForkTransactions ?? 1000;
  const checks = counter(
    metrics,
    'flashlog_executor_checks_total',
    'flashblocks checked against the feed (gas_used, receipts_root), by result',
    ['result'],
  );
  const mismatches = counter(metrics, 'flashlog_executor_mismatches_total', 'checks that failed, by field', ['field']);
  const rebuilds = counter(metrics, 'flashlog_executor_rebuilds_total', 'forks rebuilt from canonical state, by reason', ['reason']);
  const duration = histogram(
    metrics,
    'flashlog_executor_duration_seconds',
    'execution of one flashblock',
    ['kind'],
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );
  const gasTotal = counter(metrics, 'flashlog_executor_gas_total', 'gas of executed transactions', ['kind']);
  const cacheGauge = gauge(metrics, 'flashlog_executor_fork_cache', 'fork cache: hits, misses, shared in-flight reads, upstream requests', [
    'stat',
  ]);

  const forkCache = await createForkCache({ upstreamUrl: options.upstreamUrl, timeoutMs: options.timeoutMs });
  let chainId: bigint | null = null;
  let fork: { caller: EdrCaller; forkedAt: bigint; chained: number; transactions: number } | null = null;
  let pending: Pending | null = null;
  let dirty: string | null = 'first block';
  const totals = { gasUsed: 0n, transactions: 0, checks: 0, mismatches: 0, rebuilds: 0 };

  async function upstream<T>(method: string, params: unknown[]): Promise<T> {
    const response = await fetch(forkCache.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = (await response.json()) as { result?: T; error?: { message?: string } };
    if (body.error) throw new ExecutionError(`upstream ${method}: ${body.error.message ?? 'error'}`, { retryable: true });
    return body.result as T;
  }

  /** A fresh fork at canonical `parent`, waiting (bounded) for the upstream to have it. */
  async function refork(parent: bigint, reason: string): Promise<EdrCaller> {
    // An upstream that answers but lacks the parent yet is waited for; one that does not answer
    // fails the flashblock at once (ingest must not stall behind an outage).
    const deadline = Date.now() + parentWaitMs;
    for (;;) {
      let head: { number: string } | null;
      try {
        chainId ??= BigInt(await upstream<string>('eth_chainId', []));
        head = await upstream<{ number: string } | null>('eth_getBlockByNumber', [hexNumber(parent), false]);
      } catch (error) {
        throw new ExecutionError(`cannot fork at block ${parent}: ${errorMessage(error)}`, { retryable: true, cause: error });
      }
      if (head) break;
      if (Date.now() > deadline)
        throw new ExecutionError(`canonical block ${parent} did not appear upstream within ${parentWaitMs} ms`, { retryable: true });
      await sleep(100);
    }
    const replaced = fork !== null;
    fork = null;
    pending = null;
    const caller = await createForkProvider({
      url: forkCache.url,
      chainId: chainId!,
      blockNumber: parent,
      ...(options.hardfork ? { hardfork: options.hardfork } : {}),
    });
    // EDR reads the L1Block predeploy's fee parameters from the remote for every transaction
    // (6 account and 5 storage reads per tx, measured) unless the account is local. Writing
    // the slots back with their own values makes it local: mining 200 txs drops from ~1 s to ms.
    for (let slot = 0; slot <= 8; slot++) {
      const key = hexNumber(slot);
      await caller.call('hardhat_setStorageAt', [L1_BLOCK, key, await caller.call<string>('eth_getStorageAt', [L1_BLOCK, key, 'latest'])]);
    }
    forkCache.drainRequested();
    fork = { caller, forkedAt: parent, chained: 0, transactions: 0 };
    dirty = null;
    if (replaced) releaseDroppedProviders();
    totals.rebuilds++;
    rebuilds.inc({ reason: reason.split(':')[0]! });
    logger.debug({ parent: Number(parent), reason }, 'executor forked from canonical state');
    return caller;
  }

  /**
   * Drops every snapshot EDR holds without changing state. EDR's evm_revert removes every snapshot
   * from the given id on and restores only if that id exists; ids start at 1, so 0 restores nothing.
   */
  async function releaseSnapshots(caller: EdrCaller) {
    await caller.call('evm_revert', ['0x0']);
  }

  async function setEnv(caller: EdrCaller, block: AssembledBlock) {
    const header = block.header;
    await caller.call('hardhat_setCoinbase', [header.miner]);
    await caller.call('hardhat_setPrevRandao', [header.prevRandao]);
    await caller.call('evm_setBlockGasLimit', [header.gasLimit]);
    await caller.call('hardhat_setNextBlockBaseFeePerGas', [header.baseFeePerGas]);
    await caller.call('evm_setNextBlockTimestamp', [header.timestamp]);
  }

  /**
   * Sends the flashblock's new transactions to the mempool in one batch (one crossing into EDR).
   * A batch fails whole with EDR's error and without naming the transaction, so `oneByOne` (the
   * rebuild after a refusal) sends them singly to name the one refused.
   */
  async function sendAll(caller: EdrCaller, raws: readonly `0x${string}`[], block: AssembledBlock, from: number, oneByOne: boolean) {
    if (!oneByOne && raws.length > 1) {
      try {
        await caller.batch(raws.map((raw) => ['eth_sendRawTransaction', [raw]] as const));
        return;
      } catch (error) {
        throw new ExecutionError(
          `block ${block.blockNumber} index ${block.index}: one of transactions ${from}-${from + raws.length - 1} was refused by the engine: ${errorMessage(error)}`,
        );
      }
    }
    for (let i = 0; i < raws.length; i++) {
      try {
        await caller.call('eth_sendRawTransaction', [raws[i]]);
      } catch (error) {
        throw new ExecutionError(
          `block ${block.blockNumber} index ${block.index}: transaction ${from + i} (${block.transactions[from + i]?.hash}) was refused by the engine: ${errorMessage(error)}`,
        );
      }
    }
  }

  /**
   * EDR keeps what it read from the remote in the state that evm_revert rolls back, so every
   * re-mine of the block read the same accounts and slots again (about 120 requests a
   * flashblock on the devnet workload, measured). Writing them back with their current value,
   * outside any snapshot, makes them local for good. An account EDR asks the remote for is
   * unmodified since the fork, so its value at the parent is the remote one: the write is exact.
   */
  async function pinRequested(caller: EdrCaller) {
    const { accounts, slots } = forkCache.drainRequested();
    const addresses = [...accounts];
    const cells = [...slots].map((entry) => entry.split('|') as [string, string]);
    // Two batches: every current value, then every write.
    const values = await caller.batch<string>([
      ...addresses.map((address) => ['eth_getBalance', [address, 'latest']] as const),
      ...cells.map(([address, slot]) => ['eth_getStorageAt', [address, slot, 'latest']] as const),
    ]);
    await caller.batch([
      ...addresses.map((address, i) => ['hardhat_setBalance', [address, values[i]]] as const),
      ...cells.map(([address, slot], i) => ['hardhat_setStorageAt', [address, slot, values[addresses.length + i]]] as const),
    ]);
  }

  /** Mines the block so far; `pending` must hold the block's transactions in its snapshot. */
  async function mine(caller: EdrCaller, block: AssembledBlock, state: Pending, attempt: number) {
    if (state.snapshot) {
      // The snapshot is consumed by the revert; take it again afterwards.
      await caller.call('evm_revert', [state.snapshot]);
      state.snapshot = null;
    }
    await pinRequested(caller);
    const raws = block.transactions.slice(state.txCount).map((tx) => tx.raw);
    await sendAll(caller, raws, block, state.txCount, attempt > 0);
    state.txCount = block.transactions.length;
    state.snapshot = await caller.call<string>('evm_snapshot');
    await setEnv(caller, block);
    await caller.call('evm_mine');
    return caller.call<MinedHeader>('eth_getBlockByNumber', ['latest', false]);
  }

  function check(block: AssembledBlock, mined: MinedHeader): string[] {
    const failed: string[] = [];
    if (BigInt(mined.number) !== block.blockNumber) failed.push('number');
    if (mined.transactions.length !== block.transactions.length) failed.push('transactions');
    if (BigInt(mined.gasUsed) !== BigInt(block.header.gasUsed)) failed.push('gas_used');
    if (mined.receiptsRoot.toLowerCase() !== block.header.receiptsRoot.toLowerCase()) failed.push('receipts_root');
    return failed;
  }

  /** Brings the fork to the state where `block` can be mined; returns the pending entry. */
  async function prepare(block: AssembledBlock): Promise<{ caller: EdrCaller; state: Pending }> {
    const parent = block.blockNumber - 1n;
    const current = pending as Pending | null;
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
      await releaseSnapshots(caller);
      current.snapshot = null;
    }
    pending = state;
    fork!.chained++;
    return { caller, state };
  }

  async function accountsStateDiff(caller: EdrCaller, block: AssembledBlock, state: Pending, receipts: readonly RpcReceipt[]) {
    const touched = new Set<string>([block.header.miner.toLowerCase(), ...FEE_VAULTS]);
    for (const receipt of receipts) {
      touched.add(receipt.from.toLowerCase());
      if (receipt.to) touched.add(receipt.to.toLowerCase());
      if (receipt.contractAddress) touched.add(receipt.contractAddress.toLowerCase());
      for (const log of receipt.logs) touched.add(log.address.toLowerCase());
    }
    // One batch: balance and nonce of each, code once per account and block (it changes only by creation).
    const accounts = [...touched].map((address) => ({ address, known: state.diff.get(address) }));
    const calls = accounts.flatMap(({ address, known }) => [
      ['eth_getBalance', [address, 'latest']] as const,
      ['eth_getTransactionCount', [address, 'latest']] as const,
      ...(known?.code === undefined ? [['eth_getCode', [address, 'latest']] as const] : []),
    ]);
    const answers = await caller.batch<string>(calls);
    let next = 0;
    for (const { address, known } of accounts) {
      const balance = answers[next++]!;
      const nonce = answers[next++]!;
      const code = known?.code === undefined ? answers[next++]! : known.code;
      state.diff.set(address, { ...known, balance, nonce, code });
    }
  }

  async function tracedStateDiff(caller: EdrCaller, state: Pending, receipts: readonly RpcReceipt[]) {
    for (const receipt of receipts) {
      const trace = await caller.call<PrestateDiff>('debug_traceTransaction', [
        receipt.transactionHash,
        { tracer: 'prestateTracer', tracerConfig: { diffMode: true } },
      ]);
      for (const [address, pre] of Object.entries(trace.pre)) {
        if (!(address in trace.post) && pre)
          state.diff.set(address.toLowerCase(), { balance: '0x0', nonce: '0x0', code: '0x', storage: {} });
      }
      for (const [address, post] of Object.entries(trace.post)) {
        const key = address.toLowerCase();
        const account: AccountDiff = { ...state.diff.get(key) };
        if (post.balance !== undefined) account.balance = post.balance;
        if (post.nonce !== undefined) account.nonce = hexNumber(BigInt(post.nonce));
        if (post.code !== undefined) account.code = post.code;
        const cleared = trace.pre[address]?.storage ?? {};
        if (post.storage || Object.keys(cleared).length) {
          const storage = { ...account.storage };
          // Slots in pre but not in post were set to zero.
          for (const slot of Object.keys(cleared)) if (!post.storage || !(slot in post.storage)) storage[slot] = `0x${'0'.repeat(64)}`;
          Object.assign(storage, post.storage ?? {});
          account.storage = storage;
        }
        state.diff.set(key, account);
      }
    }
  }

  async function run(block: AssembledBlock, attempt: number): Promise<ExecutionOutput> {
    const { caller, state } = await prepare(block);
    let mined: MinedHeader;
    try {
      // Nothing new since the last flashblock: the block is the one already mined (mining it again
      // would cost CPU, and memory that EDR keeps until the fork is dropped).
      mined = state.mined && block.transactions.length === state.txCount ? state.mined : await mine(caller, block, state, attempt);
      state.mined = mined;
    } catch (error) {
      if (attempt > 0 || !(error instanceof ExecutionError)) throw error;
      // Refused by the engine (nonce too low after a reorg the executor has not heard of yet, for
      // instance): the pending chain is wrong. Once more from canonical state, whole block.
      logger.warn(
        { block: Number(block.blockNumber), index: block.index, err: error.message },
        'engine refused a transaction; rebuilding from canonical state',
      );
      dirty = `refused: ${error.message.slice(0, 60)}`;
      return run({ ...block, firstNew: 0 }, 1).then((output) => ({ ...output, receipts: output.receipts.slice(block.firstNew) }));
    }
    const failed = check(block, mined);
    totals.checks++;
    if (failed.length > 0) {
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
      if (attempt === 0) {
        dirty = `mismatch: ${failed.join(',')}`;
        return run({ ...block, firstNew: 0 }, 1).then((output) => ({ ...output, receipts: output.receipts.slice(block.firstNew) }));
      }
    } else {
      checks.inc({ result: 'match' });
    }
    const fresh = block.transactions.slice(block.firstNew);
    const raws = await caller.batch<Record<string, unknown> | null>(fresh.map((tx) => ['eth_getTransactionReceipt', [tx.hash]] as const));
    const receipts = raws.map((raw, i) => {
      if (!raw) throw new ExecutionError(`block ${block.blockNumber} index ${block.index}: no receipt for ${fresh[i]!.hash} after mining`);
      return pendingReceipt(raw, block);
    });
    if (stateDiffMode === 'full') await tracedStateDiff(caller, state, receipts);
    else if (stateDiffMode === 'accounts') await accountsStateDiff(caller, block, state, receipts);
    let gas = 0n;
    for (const receipt of receipts) gas += BigInt(receipt.gasUsed);
    totals.gasUsed += gas;
    totals.transactions += receipts.length;
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
      try {
        return await run(block, 0);
      } catch (error) {
        // The fork may hold a half-applied flashblock: start the next one from canonical state.
        dirty = `error: ${errorMessage(error).slice(0, 80)}`;
        throw error;
      } finally {
        end();
        cacheGauge.set({ stat: 'hits' }, forkCache.stats.hits);
        cacheGauge.set({ stat: 'misses' }, forkCache.stats.misses);
        cacheGauge.set({ stat: 'shared' }, forkCache.stats.shared);
        cacheGauge.set({ stat: 'upstream_requests' }, forkCache.stats.upstreamRequests);
      }
    },
    onCanonical() {
      // The pending chain stays valid while canonical blocks match it; nothing to drop.
    },
    onReorg(blockNumber: bigint) {
      if (pending && pending.blockNumber >= blockNumber) dirty = `reorg: block ${blockNumber}`;
      else if (fork && fork.forkedAt < blockNumber) dirty = `reorg: block ${blockNumber}`;
    },
    async close() {
      fork = null;
      pending = null;
      await forkCache.close();
    },
  };
}
