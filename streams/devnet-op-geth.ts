import { makeDirectory } from '../src/config/paths.ts';
import { join } from 'node:path';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';

/**
 * `flashlog devnet --op-geth PATH`: the devnet's L2 is that op-geth, sequenced by flashlog from the
 * L1 of --batcher-l1-rpc (devnet/op-geth/devnet.ts). Prints op-geth's JSON-RPC URL (the
 * devnet's RPC port is op-geth's own), the beacon endpoint, the rollup config's path and the
 * funded keys, and runs until Ctrl-C.
 */
export async function runOpGethDevnet(ctx: Context, opGeth: string): Promise<number> {
  const config = ctx.config;
  if (!config.batcherL1Rpc)
    throw new ConfigError(
      '--batcher-l1-rpc (FLASHLOG_BATCHER_L1_RPC): missing, expected the L1 JSON-RPC with --op-geth (its L2 blocks derive from that L1)',
    );
  if (!config.batcherKey)
    throw new ConfigError(
      '--batcher-key (FLASHLOG_BATCHER_KEY): missing, expected the funded L1 key the batcher signs with when --op-geth is set',
    );
  if (config.denim) throw new ConfigError('--op-geth (FLASHLOG_OP_GETH): not supported with --denim; expected one of them');
  if (config.reorgEvery)
    throw new ConfigError(
      `--reorg-every (FLASHLOG_REORG_EVERY): got ${config.reorgEvery}, expected 0 with --op-geth (its blocks are derived from L1, not replaced)`,
    );
  if (config.devnetHistoryBlocks)
    throw new ConfigError(
      `--devnet-history-blocks (FLASHLOG_DEVNET_HISTORY_BLOCKS): got ${config.devnetHistoryBlocks}, expected 0 with --op-geth (op-geth keeps every block)`,
    );
  const dataDir = join(config.dataDir, 'devnet-op-geth');
  makeDirectory(dataDir);
  const { startOpGethDevnet } = await import('../devnet/op-geth/devnet.ts');
  const { DEVNET_MNEMONIC } = await import('../devnet/edr/devnet.ts');
  const batcher = batcherSettings(config, config.batcherL1Rpc, config.batcherKey);
  const devnet = await startOpGethDevnet({
    binary: opGeth,
    dataDir,
    batcher,
    host: config.devnetHost,
    rpcPort: config.devnetPort,
    blockTime: config.opGethBlockTime,
    logger: ctx.logger,
    load: config.load,
  });
  ctx.shutdown.register('devnet', () => devnet.close());
  ctx.logger.info(
    {
      chainId: devnet.chainId,
      l1ChainId: devnet.l1ChainId,
      genesisHash: devnet.genesisHash,
      rpc: devnet.rpcUrl,
      beacon: devnet.beaconUrl,
      rollupConfig: devnet.rollupConfigPath,
      portal: devnet.portal,
      inbox: batcher.inbox,
      blockTime: config.opGethBlockTime,
      accounts: devnet.accounts,
    },
    'devnet started',
  );
  const lines = [
    '',
    `flashlog devnet --op-geth: OP-stack L2 (op-geth, Isthmus), chain ID ${devnet.chainId} (0x${devnet.chainId.toString(16)}), genesis ${devnet.genesisHash}`,
    `  JSON-RPC     ${devnet.rpcUrl}  (op-geth's own)`,
    `  blocks       every ${config.opGethBlockTime} s, derived from the L1 ${batcher.l1RpcUrl} (chain ID ${devnet.l1ChainId}); no flashblocks feed${config.load ? `; load ${config.load} tx/s through op-geth's txpool (no deposits)` : ''}`,
    `  deposits     ${devnet.portal} on the L1 (depositTransaction, as the OptimismPortal)`,
    `  batcher      every ${batcher.everyBlocks} blocks, ${batcher.kind} batches, ${batcher.compression}, in ${batcher.target === 'blob' ? 'blobs' : 'calldata'}, to ${batcher.inbox}`,
    `  beacon       ${devnet.beaconUrl}  (the posted blobs)`,
    `  rollup       ${devnet.rollupConfigPath}  (for prover-host --rollup-config)`,
    `  mnemonic     ${DEVNET_MNEMONIC}`,
    '  funded accounts (10,000 ETH each):',
    ...devnet.accounts.map((account, i) => `    (${i}) ${account.address}  ${account.privateKey}`),
    '',
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
  await new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
  return 0;
}

/** The devnet batcher's settings (both devnet modes post through the same batcher). */
export function batcherSettings(config: Context['config'], l1RpcUrl: string, key: string) {
  return {
    l1RpcUrl,
    key: key as `0x${string}`,
    inbox: config.batcherInbox as `0x${string}`,
    everyBlocks: config.batcherEveryBlocks,
    target: config.batcherTarget,
    kind: config.batcherBatchType,
    compression: config.batcherCompression,
    beaconPort: config.batcherBeaconPort,
  };
}
