import { ConfigError } from '../src/errors.ts';
import { createUpstream } from '../src/jsonrpc/upstream.ts';
import { upstreamChain } from '../src/log/chain-stamp.ts';
import { serviceSettings, type Command } from './command.ts';
import { batcherSettings } from './devnet-op-geth.ts';

/**
 * `flashlog devnet`: a local OP-stack L2 on EDR with Base's flashblocks feed. Prints its chain ID,
 * funded keys and ports (pino log, and a plain banner on stderr) and runs until Ctrl-C.
 */
/** The load `devnet --reorg-every` sends when --load is not given: a transaction or more per 200 ms block's reorg. */

export const devnetCommand: Command = {
  name: 'devnet',
  summary: "a local OP-stack L2 (EDR) with JSON-RPC and a flashblocks WebSocket in Base's wire format",
  usage:
    'flashlog devnet [--devnet-port 8545] [--devnet-ws-port 7111] [--block-time-ms 2000] [--flashblock-ms 200] [--load TPS] [--reorg-every K] [--devnet-history-blocks K] [--metadata-receipts] [--feed-form flashblocks|subblocks] [--plain] [--batcher-l1-rpc URL --batcher-key KEY [--batcher-target calldata|blob] [--batcher-batch-type span|singular] [--batcher-compression brotli|zlib] [--batcher-every-blocks 10] [--batcher-inbox ADDRESS] [--batcher-beacon-port 5052]]\n       flashlog devnet --op-geth PATH --batcher-l1-rpc URL --batcher-key KEY [--op-geth-block-time 1] [--devnet-port 8545] [--data-dir DIR] [--batcher-* as above]\n       flashlog devnet --denim [--devnet-port 8545] [--denim-block-ms 200] [--load TPS] [--reorg-every K] [--safe-lag-blocks 10] [--finalized-lag-blocks 50]',
  settings: [
    ...serviceSettings,
    'devnetHost',
    'devnetPort',
    'devnetWsPort',
    'blockTimeMs',
    'flashblockMs',
    'metadataReceipts',
    'feedForm',
    'plain',
    'load',
    'reorgEvery',
    'devnetHistoryBlocks',
    'denim',
    'denimBlockMs',
    'safeLagBlocks',
    'finalizedLagBlocks',
    'batcherL1Rpc',
    'batcherKey',
    'batcherInbox',
    'batcherEveryBlocks',
    'batcherTarget',
    'batcherBatchType',
    'batcherCompression',
    'batcherBeaconPort',
    'opGeth',
    'opGethBlockTime',
    'dataDir',
  ],
  longRunning: true,
  async run(ctx, positionals) {
    if (positionals.length) throw new ConfigError(`devnet takes no positional arguments, got ${JSON.stringify(positionals)}`);
    const config = ctx.config;
    if (config.opGeth) return (await import('./devnet-op-geth.ts')).runOpGethDevnet(ctx, config.opGeth);
    if (config.flashblockMs > config.blockTimeMs) {
      throw new ConfigError(
        `--flashblock-ms (FLASHLOG_FLASHBLOCK_MS): got ${config.flashblockMs}, expected at most --block-time-ms (${config.blockTimeMs})`,
      );
    }
    if (config.denim && config.devnetHistoryBlocks) {
      throw new ConfigError(
        `--devnet-history-blocks (FLASHLOG_DEVNET_HISTORY_BLOCKS): got ${config.devnetHistoryBlocks}, expected 0 with --denim (the Denim devnet has no bounded history yet)`,
      );
    }
    if (config.batcherL1Rpc && !config.batcherKey) {
      throw new ConfigError(
        '--batcher-key (FLASHLOG_BATCHER_KEY): missing, expected the private key the batcher signs with when --batcher-l1-rpc is set',
      );
    }
    if (config.batcherL1Rpc && config.denim) {
      throw new ConfigError('--batcher-l1-rpc (FLASHLOG_BATCHER_L1_RPC): not supported with --denim yet; expected the flashblocks devnet');
    }
    const batcher = config.batcherL1Rpc && config.batcherKey ? batcherSettings(config, config.batcherL1Rpc, config.batcherKey) : undefined;
    const load = (await import('../devnet/load.ts')).devnetLoadTps(config);
    if (load !== config.load)
      ctx.logger.info(
        { load, reorgEvery: config.reorgEvery },
        `--reorg-every without --load: sending ${load} tx/s so each reorg has a pre-confirmed transaction to withdraw (--load sets the rate)`,
      );
    const { createDevnet, DEVNET_MNEMONIC } = await import('../devnet/edr/devnet.ts');
    const devnet = await createDevnet({
      logger: ctx.logger,
      metrics: ctx.metrics,
      exposeMetrics: config.metrics,
      host: config.devnetHost,
      rpcPort: config.devnetPort,
      wsPort: config.devnetWsPort,
      blockTimeMs: config.blockTimeMs,
      flashblockMs: config.flashblockMs,
      metadataReceipts: config.metadataReceipts,
      feedForm: config.feedForm,
      plain: config.plain,
      load,
      reorgEvery: config.reorgEvery,
      historyBlocks: config.devnetHistoryBlocks,
      denim: config.denim,
      ...(config.denim ? { blockTimeMs: config.denimBlockMs } : {}),
      safeLagBlocks: config.safeLagBlocks,
      finalizedLagBlocks: config.finalizedLagBlocks,
      ...(batcher ? { batcher } : {}),
    }).catch((error: unknown) => {
      const { code, port } = error as { code?: string; port?: number };
      if (code === 'EADDRINUSE' || code === 'EACCES') {
        const flag =
          port === config.devnetWsPort
            ? '--devnet-ws-port (FLASHLOG_DEVNET_WS_PORT)'
            : batcher && port === config.batcherBeaconPort
              ? '--batcher-beacon-port (FLASHLOG_BATCHER_BEACON_PORT)'
              : '--devnet-port (FLASHLOG_DEVNET_PORT)';
        throw new ConfigError(
          `${flag}: ${config.devnetHost}:${port} is ${code === 'EADDRINUSE' ? 'already in use' : 'not allowed'}; expected a free port (0 = any)`,
        );
      }
      throw error;
    });
    ctx.shutdown.register('devnet', () => devnet.close());
    // A new chain at every start: its genesis (of the start time) names it, as the log's stamp does.
    const genesisHash = (await upstreamChain(createUpstream(devnet.rpcUrl, { timeoutMs: 5000 })).catch(() => null))?.genesisHash;
    ctx.logger.info(
      {
        chainId: devnet.chainId,
        genesisHash,
        rpc: devnet.rpcUrl,
        ws: devnet.wsUrl,
        rpcPort: devnet.rpcPort,
        wsPort: devnet.wsPort,
        accounts: devnet.accounts, // the well-known test keys
        blockTimeMs: config.blockTimeMs,
        flashblockMs: config.flashblockMs,
        load,
        reorgEvery: config.reorgEvery,
        historyBlocks: config.devnetHistoryBlocks,
        frames: config.plain ? 'text' : 'brotli',
        metadata: config.metadataReceipts ? 'receipts' : 'era C',
      },
      'devnet started',
    );
    const lines = devnet.denim
      ? [
          '',
          `flashlog devnet --denim: Base after Denim (EDR, Isthmus), chain ID ${devnet.chainId} (0x${devnet.chainId.toString(16)}), genesis ${genesisHash}`,
          `  JSON-RPC     ${devnet.rpcUrl}  (WebSocket ${devnet.wsUrl}: eth_subscribe newHeads, logs)`,
          `  blocks       a complete block every ${config.denimBlockMs} ms, no flashblocks; tx[1] the BaseTime deposit${load ? `, load ${load} tx/s` : ''}${config.reorgEvery ? `, unsafe head replaced every ${config.reorgEvery} blocks` : ''}`,
          `  safe         head - ${config.safeLagBlocks}, finalized head - ${config.finalizedLagBlocks} (also optimism_syncStatus)`,
          `  mnemonic     ${DEVNET_MNEMONIC}`,
          '  funded accounts (10,000 ETH each):',
          ...devnet.accounts.map((account, i) => `    (${i}) ${account.address}  ${account.privateKey}`),
          '',
        ]
      : [
          '',
          `flashlog devnet: OP-stack L2 (EDR, Isthmus), chain ID ${devnet.chainId} (0x${devnet.chainId.toString(16)}), genesis ${genesisHash}`,
          `  JSON-RPC     ${devnet.rpcUrl}${config.metrics ? `  (Prometheus metrics at ${devnet.rpcUrl}/metrics)` : ''}`,
          `  ${config.feedForm === 'subblocks' ? 'subblocks   ' : 'flashblocks '} ${devnet.wsUrl}  (${config.plain ? 'text' : 'brotli binary'} frames, ${config.feedForm === 'subblocks' ? 'state_root, block_hash, withdrawals_root zeroed, metadata with receipts' : config.metadataReceipts ? 'metadata with receipts' : 'Era C metadata'})`,
          `  blocks       every ${config.blockTimeMs} ms, a flashblock every ${config.flashblockMs} ms${load ? `, load ${load} tx/s` : ''}${config.reorgEvery ? `, reorg every ${config.reorgEvery} blocks` : ''}`,
          ...(batcher
            ? [
                `  batcher      every ${batcher.everyBlocks} blocks, ${batcher.kind} batches, ${batcher.compression}, in ${batcher.target === 'blob' ? 'blobs' : 'calldata'}, to ${batcher.inbox} on ${batcher.l1RpcUrl}`,
                `  beacon       ${devnet.batcher?.beaconUrl}/eth/v1/beacon/blob_sidecars/{slot}  (the posted blobs; slot = L1 timestamp - L1 genesis timestamp)`,
              ]
            : []),
          `  history      ${config.devnetHistoryBlocks ? `the last ${config.devnetHistoryBlocks} blocks and their state (--devnet-history-blocks)` : 'every block (EDR keeps them all; --devnet-history-blocks bounds it)'}`,
          `  mnemonic     ${DEVNET_MNEMONIC}`,
          '  funded accounts (10,000 ETH each):',
          ...devnet.accounts.map((account, i) => `    (${i}) ${account.address}  ${account.privateKey}`),
          '',
        ];
    process.stderr.write(`${lines.join('\n')}\n`);
    await new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    return 0;
  },
};
