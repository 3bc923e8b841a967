import { ConfigError } from '../src/errors.ts';
import { checkNodeStatus, checkUpstreamLag } from '../src/node/status.ts';
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

/** Kept for ingest and serve, which import it from here; the logic is `checkUpstreamLag` in src/node/status.ts. */
export async function warnIfUpstreamBehind(rpcUrl: string | undefined, logger: Logger, maxLagMinutes = 5): Promise<void> {
  await checkUpstreamLag(rpcUrl, logger, maxLagMinutes);
}
