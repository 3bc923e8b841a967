import { checkPathSettings } from '../src/config/paths.ts';
import { describeSettings, parseConfig } from '../src/config/settings.ts';
import { createShutdown, type Context } from '../src/context.ts';
import { ConfigError, errorMessage } from '../src/errors.ts';
import { createLogger } from '../src/obs/logger.ts';
import { ignoreKafkajsNegativeTimeoutWarning } from '../src/obs/warnings.ts';
import { createMetricsRegistry, serveMetrics } from '../src/obs/metrics.ts';
import type { Command } from './command.ts';
import { commands } from './commands.ts';
import { exitAfterOutput, stopWhenOutputCloses } from './exit.ts';

const overview = (): string =>
  [
    "flashlog: an OP Stack chain's pre-confirmations (a flashblocks feed, or a node's 200 ms blocks) as a replayable log, a materialized view and a pending JSON-RPC gateway.",
    '',
    'Usage: flashlog <command> [options]\n       flashlog <command> --help',
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.name.padEnd(16)}${command.summary}`),
    '',
    'Every option is also an environment variable: --kafka-brokers is FLASHLOG_KAFKA_BROKERS.',
  ].join('\n');

const commandHelp = (command: Command): string =>
  [
    `${command.summary}`,
    '',
    `Usage: ${command.usage}`,
    '',
    'Options:',
    '  --help, -h\n      show this help',
    describeSettings(command.settings, command.defaults),
  ].join('\n');

/**
 * An error as one line: viem's errors carry a multi-line message (request body, docs link,
 * version); their short message, URL and details say what failed.
 */
export function readableLine(error: unknown): string {
  const { shortMessage, url, details } = (error ?? {}) as { shortMessage?: unknown; url?: unknown; details?: unknown };
  const text =
    typeof shortMessage === 'string'
      ? `${shortMessage.replace(/\.$/, '')}${typeof url === 'string' ? ` (${url})` : ''}${typeof details === 'string' && details ? `: ${details}` : ''}`
      : errorMessage(error);
  return text.replace(/\s*\n\s*/g, '; ').trim();
}

/**
 * The CLI entry: parses the config (exit 2 on a bad setting), builds the context, runs the
 * command, ties SIGINT/SIGTERM to shutdown and exits with the command's code.
 */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<void> {
  ignoreKafkajsNegativeTimeoutWarning();
  stopWhenOutputCloses();
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${overview()}\n`);
    process.exitCode = name === undefined ? 2 : 0;
    return;
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write('flashlog 0.1.0\n');
    return;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    process.stderr.write(`flashlog: unknown command "${name}"\n\n${overview()}\n`);
    process.exitCode = 2;
    return;
  }
  let parsed: ReturnType<typeof parseConfig>;
  try {
    parsed = parseConfig(rest, env, command.settings, command.defaults);
    // Every path the command will use, before anything starts (a devnet, a listener, the log).
    if (!parsed.help) checkPathSettings(parsed.config, command.settings);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`flashlog ${command.name}: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  if (parsed.help) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return;
  }
  const { config, positionals } = parsed;
  // A service logs on stdout; a command whose stdout is its result (prove, tail, schema, …) on stderr,
  // so `flashlog prove request.json > reply.json` holds the reply alone.
  const logger = createLogger({ level: config.logLevel, name: `flashlog-${command.name}`, fd: command.longRunning ? 1 : 2 });
  const shutdown = createShutdown(logger);
  const metrics = createMetricsRegistry();
  const ctx: Context = { config, logger, metrics, shutdown };
  let exiting = false;
  const stop = (signal: string) => {
    if (exiting) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    exiting = true;
    logger.info({ signal }, 'shutting down');
    void shutdown.run(signal);
  };
  if (command.longRunning) {
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    // Commands with an HTTP listener serve /metrics on it; the others (and any command given
    // --metrics-port) open a metrics port of their own.
    if (config.metrics && config.metricsPort !== undefined) {
      try {
        const server = await serveMetrics(metrics, config.metricsHost, config.metricsPort);
        shutdown.register('metrics', () => server.close());
        logger.info({ url: server.url }, 'metrics listening');
      } catch (error) {
        process.stderr.write(
          `flashlog ${command.name}: cannot serve metrics on ${config.metricsHost}:${config.metricsPort}: ${errorMessage(error)} (set --metrics-port or --no-metrics)\n`,
        );
        process.exitCode = 2;
        return;
      }
    }
  }
  let code: number;
  try {
    code = await command.run(ctx, positionals);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`flashlog ${command.name}: ${error.message}\n`);
      code = 2;
    } else {
      // One readable line; the stack only at --log-level debug.
      logger.debug({ err: error }, `${command.name} failed`);
      process.stderr.write(`flashlog ${command.name}: ${readableLine(error)}\n`);
      code = 1;
    }
  }
  await shutdown.run('done');
  logger.flush();
  await exitAfterOutput(code);
}
