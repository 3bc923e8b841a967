import type { SourceKind } from '../src/config/source-mode.ts';
import type { Context } from '../src/context.ts';
import { ConfigError } from '../src/errors.ts';

/**
 * Starts the local devnet in-process for `flashlog run --devnet` and registers it with shutdown.
 * Kept apart (and imported only with --devnet) so EDR is only loaded when it is needed.
 */
export async function startDevnetForRun(ctx: Context, source: SourceKind): Promise<{ rpcUrl: string; wsUrl: string }> {
  // The devnet of the source mode (sourceModeOf: `--devnet --denim` is blocks): a Denim chain of 200 ms blocks, or a flashblocks feed.
  const denim = source === 'blocks';
  if (denim && ctx.config.devnetHistoryBlocks) {
    throw new ConfigError(
      `--devnet-history-blocks (FLASHLOG_DEVNET_HISTORY_BLOCKS): got ${ctx.config.devnetHistoryBlocks}, expected 0 with --denim (the Denim devnet has no bounded history yet)`,
    );
  }
  const { createDevnet } = await import('../devnet/edr/devnet.ts');
  const { devnetLoadTps } = await import('../devnet/load.ts');
  const load = devnetLoadTps(ctx.config);
  if (load !== ctx.config.load)
    ctx.logger.info(
      { load, reorgEvery: ctx.config.reorgEvery },
      `--reorg-every without --load: sending ${load} tx/s (--load sets the rate)`,
    );
  const devnet = await createDevnet({
    logger: ctx.logger,
    metrics: ctx.metrics,
    load,
    reorgEvery: ctx.config.reorgEvery,
    historyBlocks: ctx.config.devnetHistoryBlocks,
    denim,
    metadataReceipts: ctx.config.metadataReceipts,
    feedForm: ctx.config.feedForm,
  });
  ctx.shutdown.register('devnet', () => devnet.close());
  return { rpcUrl: devnet.rpcUrl, wsUrl: devnet.wsUrl };
}
