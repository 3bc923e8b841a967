import { formatEther } from 'viem';
import { ConfigError } from '../src/errors.ts';
import type { Context } from '../src/context.ts';
import { openChainLog } from '../src/log/open-chain-log.ts';
import { writerGuards } from './log-chain.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';
import { blocksSettings, createIngest, createIngestExecutor } from './ingest.ts';
import { createServe, gatewaySettings } from './serve.ts';
import { sourceModeOf, type SourceKind } from '../src/config/source-mode.ts';

/**
 * `flashlog run`: ingest + view + gateway in one process, on the embedded log unless Kafka is
 * configured. `--devnet` starts a local devnet in-process and points both at it (`--denim`: the
 * 200 ms blocks devnet and the blocks source); `--network` selects a chain's public endpoints
 * (src/config/networks.ts); `--ws`/`--rpc`/`--rpc-ws` select any other. `--source` defaults from
 * the preset, else flashblocks with `--ws` and blocks without.
 */
export interface RunHandle {
  readonly gatewayUrl: string;
  readonly gatewayWsUrl: string;
  readonly source: SourceKind;
  readonly feedUrls: readonly string[];
  readonly rpcUrl: string;
  readonly rpcWsUrl?: string | undefined;
  /** The devnet, when started with --devnet. */
  readonly devnet?: { readonly rpcUrl: string; readonly wsUrl: string };
  /** One line of pre-confirmation stats. */
  statsLine(): string;
  /** Runs until shutdown. */
  done: Promise<void>;
}

interface Endpoints {
  source: SourceKind;
  feedUrls: readonly string[];
  rpcUrl: string;
  rpcWsUrl: string | undefined;
  devnet?: { rpcUrl: string; wsUrl: string };
}

async function resolveEndpoints(ctx: Context): Promise<Endpoints> {
  const { config } = ctx;
  const mode = sourceModeOf(config);
  ctx.logger.info({ source: mode.source, decidedBy: mode.decidedBy }, 'source decided');
  if (config.devnet) {
    const { startDevnetForRun } = await import('./run-devnet.ts');
    const devnet = await startDevnetForRun(ctx, mode.source);
    return mode.source === 'blocks'
      ? { source: 'blocks', feedUrls: [], rpcUrl: devnet.rpcUrl, rpcWsUrl: devnet.wsUrl, devnet }
      : { source: 'flashblocks', feedUrls: [devnet.wsUrl], rpcUrl: devnet.rpcUrl, rpcWsUrl: undefined, devnet };
  }
  if (!mode.rpcUrl)
    throw new ConfigError(
      '--rpc (FLASHLOG_RPC): got nothing, expected the upstream http:// or https:// JSON-RPC URL (or --devnet / --network)',
    );
  if (mode.source === 'flashblocks' && mode.feedUrls.length === 0) {
    if (mode.missingFeed) throw new ConfigError(mode.missingFeed);
    throw new ConfigError(
      `--ws (FLASHLOG_WS): got nothing, expected a flashblocks ws:// URL (the source is flashblocks by ${mode.decidedBy}; or --source blocks, --devnet, --network)`,
    );
  }
  return { source: mode.source, feedUrls: mode.feedUrls, rpcUrl: mode.rpcUrl, rpcWsUrl: mode.rpcWsUrl };
}

/** Starts everything `run` composes; every resource registers with ctx.shutdown. */
export async function startRun(ctx: Context): Promise<RunHandle> {
  const { config, logger } = ctx;
  const endpoints = await resolveEndpoints(ctx);
  const { feedUrls, rpcUrl } = endpoints;
  const log = await openChainLog(ctx, { writer: true, rpcUrl, newDevnet: endpoints.devnet !== undefined });
  ctx.shutdown.register('log', () => log.close());
  const serve = await createServe(ctx, { log, rpcUrl, source: endpoints.source, rpcWsUrl: endpoints.rpcWsUrl });
  const startedAt = Date.now();
  let counts = { flashblocks: 0, blocks: 0, reorgs: 0 };
  // Receipts, logs and the state diff of pre-confirmed transactions (--executor, local EDR by
  // default), which reconciliation with canonical heads needs (sealed / reorg records); the blocks
  // source's receipts come from the node.
  const executor = endpoints.source === 'flashblocks' && config.execute ? await createIngestExecutor(ctx, rpcUrl) : undefined;
  const guards = await writerGuards(ctx, log, rpcUrl);
  const ingest = createIngest(ctx, { log, endpoints, executor, guards });
  ctx.shutdown.register('ingest', () => done.catch(() => {})); // bounded by --drain-timeout-ms
  const counted = ingest.events$.subscribe({
    next: (event) => {
      if (event.type === 'replaced') counts = { ...counts, reorgs: counts.reorgs + 1 };
      if (event.type !== 'grew') return;
      counts = { ...counts, flashblocks: counts.flashblocks + 1, blocks: counts.blocks + (event.block.index === 0 ? 1 : 0) };
    },
    // The source's failure (a node that became another chain) is the ingest's: `done` rejects with it.
    error: () => {},
  });
  ctx.shutdown.register('stats', () => counted.unsubscribe());
  const done = ingest.run();
  ctx.shutdown.register('gateway', () => serve.close());
  done.catch(() => {});
  return {
    gatewayUrl: serve.gateway.url,
    gatewayWsUrl: serve.gateway.wsUrl,
    source: endpoints.source,
    feedUrls,
    rpcUrl,
    rpcWsUrl: endpoints.rpcWsUrl,
    ...(endpoints.devnet ? { devnet: endpoints.devnet } : {}),
    done,
    statsLine() {
      const view = serve.view.current();
      const latest = view.blocks[view.blocks.length - 1];
      const seconds = Math.max(1, (Date.now() - startedAt) / 1000);
      const pending = latest
        ? `pending block ${latest.number}${endpoints.source === 'flashblocks' ? ` fb ${latest.index}` : ''}: ${latest.transactions.length} txs, ${latest.receipts.length} receipts, ${latest.logs.length} logs`
        : 'no pending block yet';
      const rate =
        endpoints.source === 'blocks'
          ? `${counts.blocks} blocks (${(counts.blocks / seconds).toFixed(1)}/s), ${counts.reorgs} replaced`
          : `${counts.flashblocks} flashblocks in ${counts.blocks} blocks (${(counts.flashblocks / seconds).toFixed(1)}/s) | canonical ${view.canonical >= 0n ? view.canonical : '?'}`;
      return `${pending} | ${rate} | ${view.applied} records in view`;
    },
  };
}

export const runCommand: Command = {
  name: 'run',
  summary: 'ingest + view + gateway in one process (try: flashlog run --devnet)',
  usage:
    'flashlog run --devnet [--denim] | --network base-mainnet|base-sepolia|unichain-mainnet|unichain-sepolia|xlayer | --ws URL --rpc URL | --source blocks --rpc URL [--rpc-ws URL] [options]',
  settings: [
    ...serviceSettings,
    ...logSettings,
    'ws',
    'maxFrameBytes',
    'pingIntervalMs',
    'reconnectMinMs',
    'reconnectMaxMs',
    'aheadBlocks',
    'produceBufferRecords',
    'drainTimeoutMs',
    ...gatewaySettings,
    'devnet',
    'network',
    'execute',
    'executor',
    'stateDiff',
    'canonicalPollMs',
    'load',
    'reorgEvery',
    'devnetHistoryBlocks',
    'source',
    'denim',
    'metadataReceipts',
    'feedForm',
    ...blocksSettings.filter((key) => key !== 'rpc' && key !== 'rpcTimeoutMs'),
  ],
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
    if (handle.source === 'blocks')
      out.write(
        `  source: 200 ms blocks from ${handle.rpcWsUrl ? `${handle.rpcWsUrl} (newHeads)` : `${handle.rpcUrl} (polled every ${ctx.config.blocksPollMs} ms)`}; upstream RPC ${handle.rpcUrl}\n`,
      );
    else out.write(`  source: flashblocks ${handle.feedUrls.join(', ')}; upstream RPC ${handle.rpcUrl}\n`);
    if (handle.devnet) {
      out.write(
        `  devnet: RPC ${handle.devnet.rpcUrl}, ${handle.source === 'blocks' ? 'WebSocket JSON-RPC' : 'flashblocks'} ${handle.devnet.wsUrl}\n`,
      );
      const { DEVNET_ACCOUNT_BALANCE, DEVNET_MNEMONIC, LOAD_ACCOUNTS, devnetAccounts } = await import('../devnet/edr/devnet.ts');
      out.write(
        [
          `  mnemonic: ${DEVNET_MNEMONIC}`,
          `  funded accounts (${formatEther(DEVNET_ACCOUNT_BALANCE)} ETH each; --load sends from 0-${LOAD_ACCOUNTS - 1}, the others are yours):`,
          ...devnetAccounts().map((account, i) => `    (${i}) ${account.address}  ${account.privateKey}`),
        ].join('\n') + '\n',
      );
    }
    if (ctx.config.network && !ctx.config.rpc)
      out.write(`  note: public endpoints are rate-limited (see README, "Chains"); use your own node (--rpc, --rpc-ws) for load\n`);
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
