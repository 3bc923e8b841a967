import { ConfigError } from '../src/errors.ts';
import { checkNodeStatus, checkUpstreamLag } from '../src/node/status.ts';
import type { Logger } from '../src/obs/logger.ts';
import type { Command } from './command.ts';

/**
 * `flashlog node-status`: one line per check; exit 0 healthy, 1 behind (or safe head stalled,
 * wrong chain, a Denim node not making 200 ms blocks), 2 unreachable. The rule (denim or
 * flashblocks) is chosen from the node's answers.
 */
export const nodeStatusCommand: Command = {
  name: 'node-status',
  summary:
    'how far a self-run node is behind (unsafe and safe heads); on Denim (Base) its 200 ms block cadence, on a flashblocks chain whether it serves pending',
  usage:
    'flashlog node-status --rpc URL [--consensus-rpc URL] [--max-lag-minutes 5] [--max-safe-lag-minutes 30] [--expect-chain-id N] [--cadence-window-ms 2000] [--json]',
  settings: [
    'logLevel',
    'rpc',
    'consensusRpc',
    'maxLagMinutes',
    'maxSafeLagMinutes',
    'expectChainId',
    'json',
    'rpcTimeoutMs',
    'cadenceWindowMs',
  ],
  defaults: { rpcTimeoutMs: '5000', logLevel: 'silent' },
  longRunning: false,
  async run(ctx) {
    const { config } = ctx;
    if (!config.rpc) throw new ConfigError("--rpc (FLASHLOG_RPC): got nothing, expected the node's http:// JSON-RPC URL (port 8545)");
    const status = await checkNodeStatus({
      rpcUrl: config.rpc,
      consensusRpcUrl: config.consensusRpc,
      maxLagMinutes: config.maxLagMinutes,
      maxSafeLagMinutes: config.maxSafeLagMinutes,
      expectChainId: config.expectChainId,
      timeoutMs: config.rpcTimeoutMs,
      cadenceWindowMs: config.cadenceWindowMs,
    });
    process.stdout.write(
      config.json ? `${JSON.stringify(status)}\n` : `${status.lines.join('\n')}\n${status.healthy ? 'healthy' : 'UNHEALTHY'}\n`,
    );
    return status.exitCode;
  },
};

/** Kept for ingest and serve, which import it from here; the logic is `checkUpstreamLag` in src/node/status.ts. */
export async function warnIfUpstreamBehind(rpcUrl: string | undefined, logger: Logger, maxLagMinutes = 5): Promise<void> {
  await checkUpstreamLag(rpcUrl, logger, maxLagMinutes);
}
