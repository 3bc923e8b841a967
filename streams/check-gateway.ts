import { progressFields, runChecker } from '../src/checker/checker.ts';
import { httpEndpoint } from '../src/checker/endpoint.ts';
import { createTally, formatProgress, formatSummary } from '../src/checker/tally.ts';
import { ConfigError } from '../src/errors.ts';
import { serviceSettings, type Command } from './command.ts';

/**
 * `flashlog check-gateway`: holds a running gateway against its node (src/checker/). Prints the
 * summary on stdout (or one JSON object with --json) and exits 1 on any mismatch, or when it
 * compared nothing (the gateway or the node unreachable, no block sealed); 2 when the gateway and
 * the node serve different chains. Its metrics (flashlog_checker_*) are on --metrics-port while it
 * runs, so it can run as a canary: without --minutes or --blocks, a chain mismatch does not end it
 * (`flashlog_checker_chain_mismatch` says so until the chains agree again).
 *
 * Progress every 30 s: a readable line on stdout, unless --json; a JSON log line with --json or when
 * stdout is not a terminal (a log collector), so machines keep theirs.
 */
export const checkGatewayCommand: Command = {
  name: 'check-gateway',
  summary: "hold a running gateway against its node: every pending answer must equal the node's once the block is sealed",
  usage: 'flashlog check-gateway --gateway URL --node URL [--minutes N] [--blocks N] [--metrics-port P] [--json]',
  settings: [...serviceSettings, 'gateway', 'node', 'minutes', 'blocks', 'rpcTimeoutMs', 'json'],
  defaults: { metricsPort: '9467', rpcTimeoutMs: '5000' },
  longRunning: true,
  async run(ctx) {
    const { config, logger } = ctx;
    if (!config.gateway) throw new ConfigError("--gateway (FLASHLOG_GATEWAY): got nothing, expected the gateway's http:// JSON-RPC URL");
    if (!config.node)
      throw new ConfigError("--node (FLASHLOG_NODE): got nothing, expected the node's http:// JSON-RPC URL (the gateway's upstream)");
    const tally = createTally(config.metrics ? ctx.metrics : undefined);
    const canary = config.minutes === 0 && config.blocks === undefined;
    const tty = process.stdout.isTTY === true;
    const summary = await runChecker({
      gateway: httpEndpoint(config.gateway, config.rpcTimeoutMs),
      node: httpEndpoint(config.node, config.rpcTimeoutMs),
      logger,
      tally,
      signal: ctx.shutdown.signal,
      durationMs: config.minutes > 0 ? config.minutes * 60_000 : undefined,
      maxBlocks: config.blocks,
      // A canary keeps running: its alert is the metric, and it resumes once the wiring is fixed.
      onChainMismatch: canary ? 'wait' : 'exit',
      metrics: config.metrics ? ctx.metrics : undefined,
      onProgress: (progress) => {
        if (!config.json) process.stdout.write(`${formatProgress(progress)}\n`);
        if (config.json || !tty) logger.info(progressFields(progress), 'checker progress');
      },
    });
    // Written before the exit: a write to a pipe completes later.
    const text = config.json ? `${JSON.stringify(summary)}\n` : `${formatSummary(summary)}\n`;
    await new Promise<void>((resolve) => process.stdout.write(text, () => resolve()));
    if (summary.blocks === 0 && summary.replaced === 0) {
      // A check that compared nothing (gateway or node unreachable, no block sealed) is no pass.
      process.stderr.write(`flashlog check-gateway: no pending block was held against the node (${JSON.stringify(summary.skipped)})\n`);
      return 1;
    }
    return summary.mismatches === 0 ? 0 : 1;
  },
};
