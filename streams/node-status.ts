import { ConfigError } from '../src/errors.ts';
import { checkNodeStatus } from '../src/node/status.ts';
import type { Logger } from '../src/obs/logger.ts';
import type { Command } from './command.ts';

/** `flashlog node-status`: exit 0 healthy, 1 behind (or wrong chain), 2 unreachable. */
export const nodeStatusCommand: Command = {
  name: 'node-status',
  summary: 'how far a self-run Base node is behind, and whether it serves pre-confirmations',
  usage: 'flashlog node-status --rpc URL [--consensus-rpc URL] [--max-lag-minutes 5] [--expect-chain-id N] [--json]',
  settings: ['logLevel', 'rpc', 'consensusRpc', 'maxLagMinutes', 'expectChainId', 'json', 'rpcTimeoutMs'],
  defaults: { rpcTimeoutMs: '5000', logLevel: 'silent' },
  longRunning: false,
  async run(ctx) {
    const { config } = ctx;
    if (!config.rpc) throw new ConfigError('--rpc (FLASHLOG_RPC): got nothing, expected the node\'s http:// JSON-RPC URL (port 8545)');
    const status = await checkNodeStatus({
      rpcUrl: config.rpc,
      consensusRpcUrl: config.consensusRpc,
      maxLagMinutes: config.maxLagMinutes,
      expectChainId: config.expectChainId,
      timeoutMs: config.rpcTimeoutMs,
    });
    process.stdout.write(config.json ? `${JSON.stringify(status)}\n` : `${status.lines.join('\n')}\n${status.healthy ? 'healthy' : 'UNHEALTHY'}\n`);
    return status.exitCode;
  },
};

/**
 * Warns at start when the upstream node is behind (ingest and serve call it; it never throws and
 * never delays start by more than the timeout).
 */
export async function warnIfUpstreamBehind(rpcUrl: string | undefined, logger: Logger, maxLagMinutes = 5): Promise<void> {
  if (!rpcUrl) return;
  const status = await checkNodeStatus({ rpcUrl, maxLagMinutes, timeoutMs: 3000 }).catch(() => null);
  if (!status) return;
  if (status.exitCode === 2) logger.warn({ upstream: rpcUrl, detail: status.lines }, 'upstream RPC unreachable at start');
  else if (status.exitCode === 1) logger.warn({ upstream: rpcUrl, minutesBehind: status.minutesBehind, detail: status.lines }, 'upstream RPC is behind: pending answers will be stale until it catches up');
}
