import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { bytesToHex, numberToHex, type Hex } from 'viem';
import { errorMessage } from '../../src/errors.ts';
import { releaseDroppedProviders } from '../../src/evm/edr.ts';
import { counter, gauge, type Registry } from '../../src/obs/metrics.ts';
import type { Call } from './block-building.ts';
import { createChainProvider, genesisAccounts, type EngineOptions, type ReplaceableEngine } from './edr-chain.ts';
import { startForkSource, type EdrForkSource } from './fork-source.ts';
import { createHistoryRing, type RingBlock, type RingReceipt } from './history-ring.ts';
import { addTouched, createStateMirror, emptyMirrorTouched, type PrestateDiff } from './state-mirror.ts';

/**
 * A bounded history for the devnet's chain (`--devnet-history-blocks K`). EDR keeps every block,
 * receipt and state diff for a provider's life and can neither prune nor reset, so every K sealed
 * blocks the devnet "rolls over": a new provider forked at the sealed head N from the devnet's own
 * records (fork-source.ts) takes the old one's place, and the old one is dropped (freed when
 * collected, releaseDroppedProviders). The chain goes on: block N+1's parent is block N, by hash.
 *
 * What the devnet keeps, and so answers:
 *   - the last K sealed blocks (the ring: the fork source answers those at or below the last fork
 *     block, the current provider those after it): blocks, transactions, receipts, logs;
 *     an older block is null, an older transaction or receipt null, as on a pruned node;
 *   - the state at every block kept, from a flat copy of the state kept as blocks are sealed
 *     (state-mirror.ts: the accounts and slots each transaction changed, from EDR's prestate
 *     tracer in diff mode, read back at the block), with the changes of the kept blocks; state
 *     at an older block is refused (-32000 "missing trie node", as a pruned geth says).
 *
 * What changes after a rollover: the state root of a block mined on a forked provider is not
 * the state trie's root but a hash EDR makes up (its fork state cannot compute the root), so those
 * blocks' hashes are not what the same chain without rollovers would have, and no stateless
 * re-execution (the prover) can check their state root. Everything else (numbers, parent hashes,
 * transactions and receipts roots, base fees, receipts, state, BLOCKHASH) is as without rollovers:
 * a spike compared a rolled-over chain with one that is not (its result: bench/results/HISTORY.md).
 *
 * Cost: tracing every transaction (EDR's debug_traceTransaction replays the block's earlier
 * transactions first, so it grows with the block's size): 2 ms a transaction in blocks of 10,
 * 6 ms in blocks of 60 (the spike). It runs inside the producer's exclusive section, at the seal.
 * Tracing the trial blocks instead (a few transactions each) would cost less but is not exact: a
 * trial block has another number than the sealed block, so a transaction that writes a slot keyed
 * by block.number (or a block hash) writes another slot there than in the sealed block.
 */
export interface ChainHistory {
  /** Reads the genesis state and block (call once, before the first block). */
  start(call: Call): Promise<void>;
  /**
   * After block `number` is sealed, inside the producer's exclusive section with no snapshot
   * held and the mempool empty: records it, and rolls over when K blocks were sealed since.
   */
  sealed(call: Call, number: bigint): Promise<void>;
  /** Rollovers so far. */
  rollovers(): number;
  /** The oldest block kept (undefined before `start`). */
  oldestBlock(): bigint | undefined;
  close(): Promise<void>;
}

export interface ChainHistoryOptions {
  readonly engine: ReplaceableEngine;
  readonly engineOptions: EngineOptions;
  /** K: blocks between two rollovers, and blocks the ring keeps. */
  readonly historyBlocks: number;
  readonly logger: Logger;
  readonly metrics?: Registry | undefined;
}

const TRACER = { tracer: 'prestateTracer', tracerConfig: { diffMode: true } } as const;

export async function createChainHistory(options: ChainHistoryOptions): Promise<ChainHistory> {
  const { engine, logger, historyBlocks } = options;
  const mirror = createStateMirror();
  const ring = createHistoryRing(historyBlocks);
  const source: EdrForkSource = await startForkSource({ chainId: Number(options.engineOptions.chainId), ring, mirror });
  // EDR writes what a fork reads at a block it deems safe to files (fork-source.ts says why it
  // does here): in a directory of our own, emptied when the provider that wrote them is dropped.
  const cacheDir = mkdtempSync(join(tmpdir(), 'flashlog-devnet-fork-'));
  const metrics = options.metrics
    ? {
        rollovers: counter(
          options.metrics,
          'flashlog_devnet_rollovers_total',
          'times the devnet moved its chain to a new EDR provider forked at its head (--devnet-history-blocks)',
        ),
        failures: counter(
          options.metrics,
          'flashlog_devnet_history_failures_total',
          'sealed blocks the devnet could not record for its bounded history, by reason',
          ['reason'],
        ),
        mirror: gauge(options.metrics, 'flashlog_devnet_state_mirror_entries', "entries of the devnet's flat copy of its state", ['kind']),
      }
    : undefined;
  // The block the current provider is forked at (null: the genesis provider), and the next seal
  // that rolls over (a failed rollover is tried again K blocks later).
  let forkedAt: bigint | null = null;
  let nextRollover = BigInt(historyBlocks);
  let rollovers = 0;
  // A block not recorded leaves the mirror short of what it changed: rolling over then would lose
  // state, so the devnet keeps its provider (and its whole history) from then on.
  let broken = false;

  async function record(call: Call, number: bigint): Promise<void> {
    const block = await call<RingBlock>('eth_getBlockByNumber', [numberToHex(number), true]);
    const receipts: RingReceipt[] = [];
    const touched = emptyMirrorTouched();
    for (const tx of block.transactions) {
      receipts.push(await call<RingReceipt>('eth_getTransactionReceipt', [tx.hash]));
      addTouched(touched, await call<PrestateDiff>('debug_traceTransaction', [tx.hash, TRACER]));
    }
    await mirror.update(call, number, touched);
    ring.add(block, receipts);
    // The current provider reads the state at its fork block for as long as it lives: kept too.
    const oldest = ring.oldest()!;
    mirror.prune(forkedAt !== null && forkedAt < oldest ? forkedAt : oldest);
  }

  async function rollover(call: Call, head: bigint): Promise<void> {
    const started = performance.now();
    // A forked provider's first block gets `initialBaseFeePerGas`, not the base fee its parent
    // implies (measured): the provider being dropped says what that is.
    const history = await call<{ baseFeePerGas: Hex[] }>('eth_feeHistory', ['0x1', numberToHex(head), []]);
    const nextBaseFee = BigInt(history.baseFeePerGas.at(-1)!);
    source.setForkBlock(head);
    let provider;
    try {
      provider = await createChainProvider(
        { ...options.engineOptions, initialBaseFeePerGas: nextBaseFee },
        { url: source.url, blockNumber: head, cacheDir: join(cacheDir, String(head)) },
      );
    } catch (error) {
      // The current provider goes on, reading at its own fork block.
      if (forkedAt !== null) source.setForkBlock(forkedAt);
      throw error;
    }
    engine.replace(provider);
    // What the dropped provider had EDR write to disk goes with it.
    if (forkedAt !== null) rmSync(join(cacheDir, String(forkedAt)), { recursive: true, force: true });
    forkedAt = head;
    rollovers += 1;
    releaseDroppedProviders();
    metrics?.rollovers.inc();
    const size = mirror.size();
    metrics?.mirror.set({ kind: 'accounts' }, size.accounts);
    metrics?.mirror.set({ kind: 'slots' }, size.slots);
    logger.info(
      {
        forkBlock: Number(head),
        oldestBlockKept: Number(ring.oldest()),
        mirrorAccounts: size.accounts,
        mirrorSlots: size.slots,
        ms: Math.round(performance.now() - started),
      },
      'devnet: rolled over to a new EVM forked at the head; older blocks and state are dropped',
    );
  }

  return {
    async start(call) {
      const genesis = emptyMirrorTouched();
      for (const account of await genesisAccounts(options.engineOptions)) {
        const address = bytesToHex(account.address);
        genesis.accounts.add(address);
        genesis.code.add(address);
        for (const slot of account.storage ?? []) genesis.slots.add(`${address}|${numberToHex(slot.index, { size: 32 })}`);
      }
      await mirror.update(call, 0n, genesis);
      ring.add(await call<RingBlock>('eth_getBlockByNumber', ['0x0', true]), []);
    },
    async sealed(call, number) {
      if (broken) return;
      try {
        await record(call, number);
      } catch (error) {
        broken = true;
        metrics?.failures.inc({ reason: 'record' });
        logger.error(
          { block: Number(number), err: errorMessage(error) },
          'devnet: a sealed block could not be recorded for the bounded history; the devnet keeps its whole history from now on',
        );
        return;
      }
      if (number < nextRollover) return;
      nextRollover = number + BigInt(historyBlocks);
      try {
        await rollover(call, number);
      } catch (error) {
        metrics?.failures.inc({ reason: 'rollover' });
        logger.error(
          { block: Number(number), err: errorMessage(error), retryAt: Number(nextRollover) },
          'devnet: rollover failed; the current EVM goes on',
        );
      }
    },
    rollovers: () => rollovers,
    oldestBlock: () => (forkedAt === null ? 0n : ring.oldest()),
    async close() {
      await source.close();
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}
