import type { Logger } from 'pino';
import { DevnetBaseTime } from '../contracts/bytecode.ts';
import { BASE_TIME_PREDEPLOY } from '../../src/op/basetime.ts';
import { createDenimProducer, type DenimBlock } from './denim-producer.ts';
import { denimDispatch, type DenimHeads } from './denim-rpc.ts';
import { createDenimSubscriptions } from './denim-subscriptions.ts';
import { createEngine } from './edr-chain.ts';
import type { Load } from '../load.ts';
import { l1AttributesFor } from './producer.ts';
import { startRpcServer } from './rpc-server.ts';
import { counter, type Registry } from '../../src/obs/metrics.ts';
import { LOAD_ACCOUNTS, type Devnet, type DevnetAccount } from '../handle.ts';

/**
 * `flashlog devnet --denim`: a local chain shaped like Base after Denim. One complete block every
 * `blockTimeMs` (200 ms), no flashblocks feed, tx[1] the BaseTime deposit into a BaseTime
 * predeploy at 0x4200…0030 (contracts/DevnetBaseTime.sol, so `timestampMs()` can be called);
 * JSON-RPC over HTTP and WebSocket on one port (eth_subscribe newHeads and logs);
 * `timestampMs` / `blockTimestampMs` in answers; `safe` / `finalized` trailing the head;
 * `reorgEvery` replaces the unsafe head.
 */
export interface DenimDevnetOptions {
  readonly logger: Logger;
  readonly host: string;
  readonly rpcPort: number;
  readonly chainId: number;
  readonly blockTimeMs: number;
  readonly reorgEvery: number;
  readonly load: number;
  readonly blockGasLimit: bigint;
  readonly safeLagBlocks: number;
  readonly finalizedLagBlocks: number;
  readonly accounts: readonly DevnetAccount[];
  readonly accountBalance: bigint;
  readonly coinbase: `0x${string}`;
  readonly metrics?: Registry | undefined;
  /** Serve `GET /metrics` from `metrics` on the JSON-RPC port. */
  readonly exposeMetrics?: boolean | undefined;
}

export async function createDenimDevnet(options: DenimDevnetOptions): Promise<Devnet> {
  const { logger, host, accounts, chainId } = options;
  const genesisTime = BigInt(Math.floor(Date.now() / 1000));
  const engine = await createEngine({
    chainId: BigInt(chainId),
    coinbase: options.coinbase,
    blockGasLimit: options.blockGasLimit,
    initialBaseFeePerGas: 1_000_000n,
    genesisTime,
    genesisL1Attributes: l1AttributesFor(0n, genesisTime),
    funded: accounts.map((account) => ({ address: account.address, balance: options.accountBalance })),
    sameTimestampBlocks: true,
    predeploys: [{ address: BASE_TIME_PREDEPLOY, code: DevnetBaseTime.deployedBytecode }],
  });
  const blocks = options.metrics
    ? counter(options.metrics, 'flashlog_devnet_blocks_total', 'blocks the devnet sealed, as pre-confirmed or reorged (--reorg-every)', [
        'outcome',
      ])
    : undefined;
  const listeners = new Set<(block: DenimBlock) => void>();
  let subscriptions: ReturnType<typeof createDenimSubscriptions> | undefined;
  let load: Load | undefined;
  const producer = createDenimProducer({
    engine,
    logger,
    blockTimeMs: options.blockTimeMs,
    genesisMs: genesisTime * 1000n,
    reorgEvery: options.reorgEvery,
    onBlock: (block) => {
      blocks?.inc({ outcome: block.replaced ? 'reorg' : 'as-preconfirmed' });
      subscriptions?.publish(block);
      for (const listener of listeners) listener(block);
    },
    takeDeposits: () => load?.takeDeposits() ?? [],
  });
  const heads: DenimHeads = {
    timestampMs: producer.timestampMs,
    head: producer.head,
    safeLagBlocks: options.safeLagBlocks,
    finalizedLagBlocks: options.finalizedLagBlocks,
  };
  subscriptions = createDenimSubscriptions({ engine, heads, logger });
  const live = subscriptions;
  let rpc: Awaited<ReturnType<typeof startRpcServer>> | undefined;
  try {
    await producer.started;
    rpc = await startRpcServer({
      host,
      port: options.rpcPort,
      engine,
      producer,
      logger,
      metrics: options.exposeMetrics ? options.metrics : undefined,
      wrap: (dispatch) => denimDispatch(dispatch, engine, heads),
      attach: (server, dispatch) => live.attach(server, dispatch),
    });
    if (options.load) {
      const { startLoad } = await import('../load.ts');
      // As on the flashblocks devnet: the load signs with accounts 0-7 only; 8 and 9 are the user's.
      load = await startLoad({ engine, producer, logger, accounts: accounts.slice(0, LOAD_ACCOUNTS), chainId, tps: options.load });
    }
  } catch (error) {
    await producer.stop();
    await rpc?.close();
    throw error;
  }
  const server = rpc;
  const running = load;
  let closing: Promise<void> | undefined;
  return {
    rpcUrl: server.url,
    wsUrl: server.url.replace(/^http/, 'ws'),
    rpcPort: server.port,
    wsPort: server.port,
    chainId,
    accounts,
    denim: true,
    load: running ? { token: running.token, workload: running.workload, counts: () => running.counts() } : null,
    onFlashblock: () => () => false,
    onSealed: () => () => false,
    onBlock(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closing ??= (async () => {
        await load?.stop();
        await producer.stop();
        await server.close();
      })();
      return closing;
    },
  };
}
