import { ConfigError } from '../src/errors.ts';
import type { Context } from '../src/context.ts';
import { openLog } from '../src/log/open.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { createIngest } from './ingest.ts';
import { createExecution, type Execution } from './reconcile.ts';
import { createServe, gatewaySettings } from './serve.ts';

/**
 * `flashlog run`: ingest + view + gateway in one process, on the embedded log unless Kafka is
 * configured. `--devnet` starts a local devnet in-process and points both at it; `--network`
 * selects Base's public feed and RPC; `--ws`/`--rpc` select any other.
 */
export const networks = {
  'base-mainnet': { ws: 'wss://mainnet.flashblocks.base.org/ws', rpc: 'https://mainnet.base.org' },
  'base-sepolia': { ws: 'wss://sepolia.flashblocks.base.org/ws', rpc: 'https://sepolia.base.org' },
} as const;

export interface RunHandle {
  readonly gatewayUrl: string;
  readonly gatewayWsUrl: string;
  readonly feedUrls: readonly string[];
  readonly rpcUrl: string;
  /** The devnet, when started with --devnet. */
  readonly devnet?: { readonly rpcUrl: string; readonly wsUrl: string };
  /** One line of pre-confirmation stats. */
  statsLine(): string;
  /** Runs until shutdown. */
  done: Promise<void>;
}

/** Starts everything `run` composes; every resource registers with ctx.shutdown. */
export async function startRun(ctx: Context): Promise<RunHandle> {
  const { config, logger } = ctx;
  let feedUrls: readonly string[] | undefined = config.ws;
  let rpcUrl: string | undefined = config.rpc;
  let devnet: { rpcUrl: string; wsUrl: string } | undefined;
  if ([config.devnet, config.network !== undefined].filter(Boolean).length > 1) {
    throw new ConfigError('--devnet and --network: got both, expected one of them');
  }
  if (config.devnet) {
    const { startDevnetForRun } = await import('./run-devnet.ts');
    devnet = await startDevnetForRun(ctx);
    feedUrls = [devnet.wsUrl];
    rpcUrl = devnet.rpcUrl;
  } else if (config.network) {
    const network = networks[config.network];
    feedUrls = config.ws ?? [network.ws];
    rpcUrl = config.rpc ?? network.rpc;
  }
  if (!feedUrls || feedUrls.length === 0) {
    throw new ConfigError('--ws (FLASHLOG_WS): got nothing, expected a flashblocks ws:// URL, or --devnet, or --network base-mainnet|base-sepolia');
  }
  if (!rpcUrl) throw new ConfigError('--rpc (FLASHLOG_RPC): got nothing, expected the upstream http:// or https:// JSON-RPC URL (or --devnet / --network)');
  const log = await openLog(config, logger);
  ctx.shutdown.register('log', () => log.close());
  const serve = await createServe(ctx, { log, rpcUrl });
  // Receipts, logs and the state diff of pre-confirmed transactions (--executor, local EDR by
  // default), and reconciliation with canonical heads from the upstream (sealed / reorg records).
  let execution: Execution | undefined;
  if (config.execute) {
    execution = await createExecution(ctx, { rpcUrl });
    ctx.shutdown.register('execution', () => execution!.close());
  }
  const ingest = createIngest(ctx, {
    log, urls: feedUrls, ...(execution ? { executor: execution.executor, canonical$: execution.canonical$ } : {}),
  });
  execution?.start(ingest.publisher);
  ctx.shutdown.register('publisher', () => ingest.publisher.flush());
  ctx.shutdown.register('gateway', () => serve.close());
  const startedAt = Date.now();
  let flashblocks = 0;
  let blocks = 0;
  const counted = ingest.events$.subscribe((event) => {
    if (event.type !== 'accepted') return;
    flashblocks += 1;
    if (event.block.index === 0) blocks += 1;
  });
  ctx.shutdown.register('stats', () => counted.unsubscribe());
  const done = ingest.run();
  done.catch(() => {});
  return {
    gatewayUrl: serve.gateway.url,
    gatewayWsUrl: serve.gateway.wsUrl,
    feedUrls,
    rpcUrl,
    ...(devnet ? { devnet } : {}),
    done,
    statsLine() {
      const view = serve.view.current();
      const latest = view.blocks[view.blocks.length - 1];
      const seconds = Math.max(1, (Date.now() - startedAt) / 1000);
      const pending = latest
        ? `pending block ${latest.number} fb ${latest.index}: ${latest.transactions.length} txs, ${latest.receipts.length} receipts, ${latest.logs.length} logs`
        : 'no pending block yet';
      return `${pending} | ${flashblocks} flashblocks in ${blocks} blocks (${(flashblocks / seconds).toFixed(1)}/s) | canonical ${view.canonical >= 0n ? view.canonical : '?'} | ${view.applied} records in view`;
    },
  };
}

export const runCommand: Command = {
  name: 'run',
  summary: 'ingest + view + gateway in one process (try: flashlog run --devnet)',
  usage: 'flashlog run --devnet | --network base-mainnet|base-sepolia | --ws URL --rpc URL [options]',
  settings: [...serviceSettings, ...logSettings, 'ws', 'maxFrameBytes', 'pingIntervalMs', 'reconnectMinMs', 'reconnectMaxMs',
    'aheadBlocks', 'produceBufferRecords', ...gatewaySettings, 'devnet', 'network', 'execute', 'executor', 'stateDiff', 'canonicalPollMs', 'load', 'reorgEvery'],
  // With --devnet, some traffic so a newcomer sees pre-confirmations flowing (--load 0 for none).
  // The state diff is `accounts`, as for ingest: `full` (every changed storage slot, so pending
  // eth_call/eth_getStorageAt see pre-confirmed storage) cost 7x per 20-tx flashblock and 25x per
  // 200-tx one in `npm run bench -- executor` (p50 1.0 s and 12.7 s), more than a flashblock's 200 ms.
  defaults: { load: '10' },
  longRunning: true,
  async run(ctx) {
    const handle = await startRun(ctx);
    const out = process.stdout;
    out.write(`flashlog gateway: ${handle.gatewayUrl} (WebSocket ${handle.gatewayWsUrl})\n`);
    out.write(`  feed ${handle.feedUrls.join(', ')}; upstream RPC ${handle.rpcUrl}\n`);
    if (handle.devnet) out.write(`  devnet: RPC ${handle.devnet.rpcUrl}, flashblocks ${handle.devnet.wsUrl}\n`);
    if (ctx.config.network) out.write(`  note: Base's public endpoints are rate-limited and the public RPC refuses eth_getBlockReceipts; use your own node for load\n`);
    const tty = out.isTTY === true;
    let lastPrinted = 0;
    const ticker = setInterval(() => {
      const line = handle.statsLine();
      if (tty) out.write(`\r\x1b[2K${line}`);
      else if (Date.now() - lastPrinted >= 10_000) {
        lastPrinted = Date.now();
        out.write(`${line}\n`);
      }
    }, 1000);
    ctx.shutdown.register('stats-line', () => {
      clearInterval(ticker);
      if (tty) out.write('\n');
    });
    await Promise.race([
      handle.done,
      new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true })),
    ]);
    return 0;
  },
};
