import type { SettingKey } from '../src/config/settings.ts';
import type { Context } from '../src/context.ts';

/**
 * One CLI command: a composition of pipelines. `run` resolves with the exit code once the
 * command is done; a long-running command resolves when `ctx.shutdown.signal` aborts.
 */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** e.g. `flashlog tail TOPIC [options]` */
  readonly usage: string;
  readonly settings: readonly SettingKey[];
  /** Defaults of this command that differ from the settings table's. */
  readonly defaults?: Partial<Record<SettingKey, string>>;
  /** Serves /metrics and ties SIGINT/SIGTERM to shutdown. */
  readonly longRunning: boolean;
  run(ctx: Context, positionals: readonly string[]): Promise<number>;
}

/**
 * Settings every long-running command takes. A command without an HTTP listener of its own sets a
 * default `metricsPort` unique among the commands (ingest 9464, enclave 9465, prover-bridge 9466),
 * so any set of commands started with their defaults on one machine runs side by side.
 */
export const serviceSettings: readonly SettingKey[] = ['logLevel', 'metrics', 'metricsHost', 'metricsPort'];
/** Settings of every command that opens the log. */
export const logSettings: readonly SettingKey[] = [
  'log',
  'dataDir',
  'kafkaBrokers',
  'kafkaClientId',
  'topicPrefix',
  'topicPartitions',
  'topicReplication',
  'topicRetentionMs',
];
