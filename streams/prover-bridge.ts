import { openChainLog } from '../src/log/open-chain-log.ts';
import { createProofBridge } from '../src/prover/bridge/bridge.ts';
import { callProverHostWithRetry } from '../src/prover/bridge/host-client.ts';
import { logSettings, serviceSettings, type Command } from './command.ts';

/**
 * `flashlog prover-bridge`: flashlog.proofs.requests -> prover host -> flashlog.proofs.replies,
 * in a consumer group (default `flashlog-prover-bridge`), with --prover-concurrency proofs at once.
 *
 *   openChainLog (--rpc: checked, never stamped) -> createProofBridge (src/prover/bridge/bridge.ts)
 *        prove: callProverHostWithRetry(--prover-url) -> until shutdown or the request stream ends
 */
export const proverBridgeCommand: Command = {
  name: 'prover-bridge',
  summary: 'carry proof requests from the log to the prover host and its replies back',
  usage: 'flashlog prover-bridge [--prover-url http://127.0.0.1:7300] [--prover-concurrency 4] [--timeout 1740] [log options]',
  // --rpc: the L2 node whose chain the log must hold (checked, never stamped).
  settings: [...serviceSettings, ...logSettings, 'group', 'proverUrl', 'proverConcurrency', 'timeout', 'rpc', 'rpcTimeoutMs'],
  defaults: { metricsPort: '9466' },
  longRunning: true,
  async run(ctx) {
    const { config, logger } = ctx;
    const log = await openChainLog(ctx, { writer: false, rpcUrl: config.rpc });
    ctx.shutdown.register('log', () => log.close());
    // The host enforces --timeout itself and answers -32000; the HTTP call waits a little longer.
    const httpTimeoutMs = config.timeout * 1000 + 30_000;
    const bridge = createProofBridge({
      log,
      group: config.group ?? 'flashlog-prover-bridge',
      concurrency: config.proverConcurrency,
      prove: (request, signal) => callProverHostWithRetry(config.proverUrl, request, { timeoutMs: httpTimeoutMs, signal }),
      logger,
      metrics: ctx.metrics,
    });
    ctx.shutdown.register('prover-bridge', () => bridge.stop());
    await bridge.start();
    logger.info({ prover: config.proverUrl, concurrency: config.proverConcurrency, log: log.kind }, 'prover bridge consuming');
    const stopped = new Promise<void>((resolve) => ctx.shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([bridge.done, stopped]);
    } catch (error) {
      logger.error({ err: error }, 'the request stream failed');
      return 1;
    }
    return 0;
  },
};
