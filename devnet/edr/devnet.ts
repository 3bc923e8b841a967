import type { Logger } from 'pino';
import { pino } from 'pino';
import { bytesToHex, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { ConfigError } from '../../src/errors.ts';
import { createEngine, type EngineOptions } from './edr-chain.ts';
import { createChainHistory } from './rollover.ts';
import { prunedView } from './pruned-view.ts';
import type { RpcCall } from '../../src/jsonrpc/protocol.ts';
import { startFeedServer } from './feed-server.ts';
import { createProducer, l1AttributesFor, type SentFlashblock, type SealedBlock } from './producer.ts';
import { toSubblock } from './sent-flashblock.ts';
import type { Load } from '../load.ts';
import { startRpcServer } from './rpc-server.ts';
import { LOAD_ACCOUNTS, type Devnet, type DevnetAccount } from '../handle.ts';
import { createDevnetBatcher, type DevnetBatcherOptions } from '../devnet-batcher.ts';
import { counter, gauge, histogram, type Registry } from '../../src/obs/metrics.ts';
import { sequencerFeeVault } from '../../src/op/predeploys.ts';

/**
 * `flashlog devnet` as a library: a local OP-stack L2 (EDR, OP chain type, Isthmus) with a
 * JSON-RPC endpoint and a flashblocks WebSocket in Base's wire format.
 *
 * @example
 *   const devnet = await createDevnet({ blockTimeMs: 400, flashblockMs: 100 });
 *   // devnet.rpcUrl, devnet.wsUrl, devnet.accounts[0].privateKey
 *   await devnet.close();
 */
export const DEVNET_MNEMONIC = 'test test test test test test test test test test test junk';
export const DEVNET_CHAIN_ID = 1337;
/** Base's fee recipient (SequencerFeeVault), the coinbase of every devnet block. */
export const DEVNET_COINBASE: Hex = sequencerFeeVault;
export const DEVNET_ACCOUNT_BALANCE = 10_000n * 10n ** 18n;

export interface DevnetOptions {
  readonly logger?: Logger;
  readonly host?: string;
  /** JSON-RPC port; 0 (the library default) = any free port. The command defaults to 8545. */
  readonly rpcPort?: number;
  /** Flashblocks WebSocket port; 0 (the library default) = any free port. The command defaults to 7111. */
  readonly wsPort?: number;
  readonly chainId?: number;
  readonly blockTimeMs?: number;
  readonly flashblockMs?: number;
  /** Era B metadata: `type`-tagged receipts of each flashblock's new transactions. */
  readonly metadataReceipts?: boolean;
  /**
   * The feed's form: Base's flashblocks (default), or OP's subblocks (the four commitment fields
   * zeroed in every frame, receipts in the metadata; toSubblock in sent-flashblock.ts).
   */
  readonly feedForm?: 'flashblocks' | 'subblocks';
  /** Text frames instead of brotli binary frames. */
  readonly plain?: boolean;
  /** Every K-th block seals without its last pre-confirmed user transaction (0 = never). */
  readonly reorgEvery?: number;
  /** Transactions per second of the built-in load generator (0 = none). */
  readonly load?: number;
  readonly blockGasLimit?: bigint;
  /** Where the devnet's metrics go (flashlog_devnet_*); none when absent. */
  readonly metrics?: Registry;
  /**
   * Testing: pre-confirm each eth_sendRawTransaction at once (its flashblock is on the feed before
   * the answer), and hold the answer this many ms more, so the pre-confirmation reaches a gateway
   * before the RPC answer does. Absent: transactions wait for the next flashblock tick.
   */
  readonly preconfirmOnSubmit?: { readonly answerDelayMs: number };
  /** Serve `GET /metrics` from `metrics` on the JSON-RPC port (the `devnet` command does). */
  readonly exposeMetrics?: boolean;
  /**
   * Base after Denim: complete blocks every `blockTimeMs` (default 200), no flashblocks feed, the
   * BaseTime deposit as tx[1], WebSocket JSON-RPC on the RPC port (see denim-devnet.ts).
   */
  readonly denim?: boolean;
  /** Denim: `safe` trails the head by this many blocks (default 10), `finalized` by the next (default 50). */
  readonly safeLagBlocks?: number;
  readonly finalizedLagBlocks?: number;
  /**
   * Bounded history (flashblocks devnet): every this many sealed blocks the chain moves to a new
   * EDR provider forked at its head, and what is older than that many blocks is dropped (see
   * rollover.ts for what is kept). 0 (the default) keeps everything, as EDR does. BLOCKHASH reads
   * the 256 blocks below the head: below 256 a contract reading an older block's hash gets none.
   */
  readonly historyBlocks?: number;
  /**
   * Post the sealed blocks to an L1 as batcher transactions (batcher.ts); flashblocks devnet only.
   * The chain (genesis time, block time, chain id) is the devnet's.
   */
  readonly batcher?: DevnetBatcherOptions;
}

export type { Devnet, DevnetAccount } from '../handle.ts';

export { LOAD_ACCOUNTS } from '../handle.ts';

export function devnetAccounts(count = 10): DevnetAccount[] {
  return Array.from({ length: count }, (_, addressIndex) => {
    const account = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex });
    const key = account.getHdKey().privateKey;
    if (!key) throw new Error(`no private key for devnet account ${addressIndex}`);
    return { address: account.address, privateKey: bytesToHex(key) };
  });
}

/**
 * The flashblocks devnet's engine options: genesis now unless given, every account funded with
 * `balance`. The bench that measures the devnet's engine (`npm run bench -- edr-memory`) runs it
 * with these too.
 */
export function devnetEngineOptions(
  chainId: number | bigint,
  accounts: readonly DevnetAccount[],
  overrides: { readonly blockGasLimit?: bigint; readonly genesisTime?: bigint; readonly balance?: bigint } = {},
): EngineOptions {
  const genesisTime = overrides.genesisTime ?? BigInt(Math.floor(Date.now() / 1000));
  return {
    chainId: BigInt(chainId),
    coinbase: DEVNET_COINBASE,
    blockGasLimit: overrides.blockGasLimit ?? 60_000_000n,
    // Trial blocks between two flashblocks share the block's timestamp (block-building.ts).
    sameTimestampBlocks: true,
    initialBaseFeePerGas: 1_000_000n,
    genesisTime,
    genesisL1Attributes: l1AttributesFor(0n, genesisTime),
    funded: accounts.map((account) => ({ address: account.address, balance: overrides.balance ?? DEVNET_ACCOUNT_BALANCE })),
  };
}

/** The flashblocks devnet's own metrics (flashblocks, transactions, blocks by outcome, build time, feed clients). */
function devnetMetrics(registry: NonNullable<DevnetOptions['metrics']>) {
  return {
    flashblocks: counter(registry, 'flashlog_devnet_flashblocks_total', 'flashblocks the devnet sent'),
    transactions: counter(
      registry,
      'flashlog_devnet_preconfirmed_transactions_total',
      'transactions the devnet pre-confirmed (deposits included)',
    ),
    blocks: counter(registry, 'flashlog_devnet_blocks_total', 'blocks the devnet sealed, as pre-confirmed or reorged (--reorg-every)', [
      'outcome',
    ]),
    build: histogram(
      registry,
      'flashlog_devnet_flashblock_build_seconds',
      'time to build one flashblock (trial-mine the block so far, read it, revert)',
      [],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
    ),
    clients: gauge(registry, 'flashlog_devnet_feed_clients', 'WebSocket clients of the flashblocks feed'),
  };
}

export async function createDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const host = options.host ?? '127.0.0.1';
  const chainId = options.chainId ?? DEVNET_CHAIN_ID;
  const blockTimeMs = options.blockTimeMs ?? 2000;
  const flashblockMs = options.flashblockMs ?? 200;
  if (!options.denim && !(flashblockMs > 0 && blockTimeMs >= flashblockMs)) {
    throw new ConfigError(`--block-time-ms (${blockTimeMs}) must be at least --flashblock-ms (${flashblockMs}), itself positive`);
  }
  const accounts = devnetAccounts();
  if (options.denim && options.historyBlocks) {
    throw new ConfigError('historyBlocks (--devnet-history-blocks) is not supported with denim (--denim): its producer has no rollover');
  }
  if (options.denim && options.batcher) throw new ConfigError('batcher (--batcher-l1-rpc) is not supported with denim (--denim) yet');
  if (options.denim) {
    const { createDenimDevnet } = await import('./denim-devnet.ts');
    return createDenimDevnet({
      logger,
      host,
      rpcPort: options.rpcPort ?? 0,
      chainId,
      blockTimeMs: options.blockTimeMs ?? 200,
      reorgEvery: options.reorgEvery ?? 0,
      load: options.load ?? 0,
      blockGasLimit: options.blockGasLimit ?? 60_000_000n,
      safeLagBlocks: options.safeLagBlocks ?? 10,
      finalizedLagBlocks: options.finalizedLagBlocks ?? 50,
      accounts,
      accountBalance: DEVNET_ACCOUNT_BALANCE,
      coinbase: DEVNET_COINBASE,
      metrics: options.metrics,
      exposeMetrics: options.exposeMetrics,
    });
  }
  const blockGasLimit = options.blockGasLimit ?? 60_000_000n;
  const engineOptions = devnetEngineOptions(chainId, accounts, { blockGasLimit });
  const engine = await createEngine(engineOptions);
  const history = options.historyBlocks
    ? await createChainHistory({ engine, engineOptions, historyBlocks: options.historyBlocks, logger, metrics: options.metrics })
    : undefined;
  if (history) await engine.exclusive((call) => history.start(call));

  const metrics = options.metrics ? devnetMetrics(options.metrics) : undefined;
  const flashblockListeners = new Set<(flashblock: SentFlashblock) => void>();
  const sealedListeners = new Set<(block: SealedBlock) => void>();
  const blockTimeSeconds = Math.max(1, Math.round(blockTimeMs / 1000));
  const batcher = options.batcher
    ? createDevnetBatcher(
        options.batcher,
        { chainId: BigInt(chainId), l2GenesisTime: engineOptions.genesisTime, blockTime: BigInt(blockTimeSeconds) },
        host,
        logger,
      )
    : undefined;
  // The feed server starts first so the very first flashblock can be broadcast.
  const feed = await startFeedServer({ host, port: options.wsPort ?? 0, plain: options.plain ?? false, logger });
  let load: Load | undefined;
  const producer = createProducer({
    engine,
    logger,
    blockTimeMs,
    flashblockMs,
    blockTimeSeconds,
    blockGasLimit,
    metadataReceipts: (options.metadataReceipts ?? false) || options.feedForm === 'subblocks', // subblocks keep receipts (specs subblocks.md)
    reorgEvery: options.reorgEvery ?? 0,
    onFlashblock: (built, buildMs) => {
      const flashblock = options.feedForm === 'subblocks' ? toSubblock(built) : built;
      feed.broadcast(flashblock);
      metrics?.flashblocks.inc();
      metrics?.transactions.inc(flashblock.diff.transactions.length);
      metrics?.build.observe(buildMs / 1000);
      metrics?.clients.set(feed.clientCount());
      for (const listener of flashblockListeners) listener(flashblock);
    },
    onSealed: (block) => {
      metrics?.blocks.inc({ outcome: block.dropped ? 'reorg' : 'as-preconfirmed' });
      logger.debug(
        { block: block.number, hash: block.hash, txs: block.transactions.length, dropped: block.dropped },
        'devnet: block sealed',
      );
      for (const listener of sealedListeners) listener(block);
      batcher?.sealed(block);
    },
    takeDeposits: () => load?.takeDeposits() ?? [],
    ...(history ? { afterSeal: (call, block) => history.sealed(call, block.number) } : {}),
    preconfirmOnSubmit: options.preconfirmOnSubmit !== undefined,
  });
  let rpc: Awaited<ReturnType<typeof startRpcServer>> | undefined;
  try {
    await producer.started;
    await batcher?.start();
    rpc = await startRpcServer({
      host,
      port: options.rpcPort ?? 0,
      engine,
      producer,
      logger,
      metrics: options.exposeMetrics ? options.metrics : undefined,
      sendAnswerDelayMs: options.preconfirmOnSubmit?.answerDelayMs ?? 0,
      ...(history ? { wrap: (dispatch: (call: RpcCall) => Promise<unknown>) => prunedView(() => history.oldestBlock(), dispatch) } : {}),
    });
    if (options.load) {
      const { startLoad } = await import('../load.ts');
      // The load signs with accounts 0-7 only: 8 and 9 are the user's (and tests'), whose
      // transactions then never race the load's for a nonce ("replacement transaction underpriced").
      load = await startLoad({ engine, producer, logger, accounts: accounts.slice(0, LOAD_ACCOUNTS), chainId, tps: options.load });
    }
  } catch (error) {
    await producer.stop();
    await feed.close();
    await rpc?.close();
    await history?.close();
    await batcher?.close();
    throw error;
  }
  const rpcServer = rpc;
  const running = load;
  let closing: Promise<void> | undefined;
  return {
    rpcUrl: rpcServer.url,
    wsUrl: feed.url,
    rpcPort: rpcServer.port,
    wsPort: feed.port,
    chainId,
    accounts,
    load: running ? { token: running.token, workload: running.workload, counts: () => running.counts() } : null,
    denim: false,
    ...(batcher ? { batcher: batcher.handle() } : {}),
    onBlock: () => () => false,
    onFlashblock(listener) {
      flashblockListeners.add(listener);
      return () => flashblockListeners.delete(listener);
    },
    onSealed(listener) {
      sealedListeners.add(listener);
      return () => sealedListeners.delete(listener);
    },
    close() {
      closing ??= (async () => {
        await load?.stop();
        await producer.stop();
        await batcher?.close();
        await Promise.all([rpcServer.close(), feed.close()]);
        await history?.close();
      })();
      return closing;
    },
  };
}
