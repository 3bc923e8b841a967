import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { serviceSettingSpecs } from './settings/service.ts';
import { logSettingSpecs, tailSettingSpecs } from './settings/log.ts';
import { sourceSettingSpecs } from './settings/source.ts';
import { executionSettingSpecs } from './settings/execution.ts';
import { gatewaySettingSpecs } from './settings/gateway.ts';
import { devnetSettingSpecs } from './settings/devnet.ts';
import { batcherSettingSpecs } from './settings/batcher.ts';
import { opGethSettingSpecs } from './settings/op-geth.ts';
import { proverSettingSpecs } from './settings/prover.ts';
import { nodeSettingSpecs } from './settings/node.ts';
import { checkerSettingSpecs } from './settings/checker.ts';
import { deriveSettingSpecs } from './settings/derive.ts';
import type { SettingSpec } from './settings/spec.ts';

export type { SettingSpec } from './settings/spec.ts';

/**
 * Every setting of every command, in one table composed of the tables by subject in settings/.
 * Each is a flag (`--kafka-brokers`) and an environment variable (`FLASHLOG_KAFKA_BROKERS`); a flag
 * wins over the variable, the variable over the default. Values arrive as strings and are validated
 * by one zod schema built from this table.
 *
 * It is an invariant that keys are camelCase and their flag is the kebab-case of the key.
 */
export const settings = {
  ...serviceSettingSpecs,
  ...logSettingSpecs,
  ...sourceSettingSpecs,
  ...tailSettingSpecs,
  ...executionSettingSpecs,
  ...gatewaySettingSpecs,
  ...devnetSettingSpecs,
  ...batcherSettingSpecs,
  ...opGethSettingSpecs,
  ...proverSettingSpecs,
  ...nodeSettingSpecs,
  ...checkerSettingSpecs,
  ...deriveSettingSpecs,
} satisfies Record<string, SettingSpec>;

export type SettingKey = keyof typeof settings;
export type Config = { [K in SettingKey]: z.output<(typeof settings)[K]['schema']> };

export const flagOf = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
export const envOf = (key: string): string => `FLASHLOG_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

/** The one schema: every setting, raw strings in, typed config out. */
export const configSchema = z.object(
  Object.fromEntries(Object.entries(settings).map(([key, spec]) => [key, spec.default === undefined ? spec.schema : spec.schema])) as {
    [K in SettingKey]: (typeof settings)[K]['schema'];
  },
);

/**
 * Resolves the settings a command accepts from its argv and the environment.
 * Throws ConfigError naming the setting, what it got and what it expects.
 *
 * @example parseConfig(['--ws', 'ws://127.0.0.1:7111'], {}, ['ws', 'logLevel'])
 */
export function parseConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  accepted: readonly SettingKey[],
  /** Defaults of this command that differ from the table's (e.g. prover-host's port 7300). */
  defaults: Partial<Record<SettingKey, string>> = {},
): { config: Config; positionals: string[]; help: boolean } {
  const byFlag = new Map<string, SettingKey>();
  const byShort = new Map<string, SettingKey>();
  for (const key of accepted) {
    byFlag.set(flagOf(key), key);
    const short = (settings[key] as SettingSpec).short;
    if (short) byShort.set(short, key);
  }
  const raw: Partial<Record<SettingKey, string | string[]>> = {};
  const source: Partial<Record<SettingKey, string>> = {};
  for (const key of Object.keys(settings) as SettingKey[]) {
    const spec = settings[key] as SettingSpec;
    const fromEnv = env[envOf(key)];
    if (fromEnv !== undefined && fromEnv !== '') {
      raw[key] = spec.repeatable
        ? fromEnv
            .split(',')
            .map((part) => part.trim())
            .filter(Boolean)
        : fromEnv;
      source[key] = envOf(key);
    } else if ((defaults[key] ?? spec.default) !== undefined) {
      raw[key] = defaults[key] ?? spec.default;
      source[key] = 'default';
    }
  }
  const positionals: string[] = [];
  const fromFlags = new Set<SettingKey>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    let name: string;
    let inline: string | undefined;
    let key: SettingKey | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      key = byFlag.get(name);
      if (!key && name.startsWith('no-') && byFlag.has(name.slice(3))) {
        const negated = byFlag.get(name.slice(3))!;
        if ((settings[negated] as SettingSpec).boolean) {
          raw[negated] = 'false';
          source[negated] = `--${name}`;
          continue;
        }
      }
    } else {
      name = arg.slice(1);
      key = byShort.get(name);
    }
    if (!key) throw new ConfigError(`unknown option ${arg}; see --help for the options of this command`);
    const spec = settings[key] as SettingSpec;
    let value: string;
    if (spec.boolean && inline === undefined) {
      value = 'true';
    } else if (inline !== undefined) {
      value = inline;
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError(`--${flagOf(key)} needs a value: expected ${spec.expects}`);
      value = next;
      i++;
    }
    if (spec.repeatable) {
      const previous = fromFlags.has(key) ? (raw[key] as string[]) : [];
      raw[key] = [
        ...previous,
        ...value
          .split(',')
          .map((part) => part.trim())
          .filter(Boolean),
      ];
    } else {
      raw[key] = value;
    }
    fromFlags.add(key);
    source[key] = `--${flagOf(key)}`;
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path[0] as SettingKey;
    const spec = settings[key] as SettingSpec;
    const got = raw[key];
    const where =
      source[key] === 'default' || source[key] === undefined
        ? `--${flagOf(key)} (${envOf(key)})`
        : `${source[key]}${source[key]!.startsWith('--') ? ` (or ${envOf(key)})` : ` (--${flagOf(key)})`}`;
    throw new ConfigError(`${where}: got ${JSON.stringify(got)}, expected ${spec.expects}`);
  }
  const config = parsed.data as Config;
  // The log engine follows the brokers unless chosen explicitly.
  if (config.kafkaBrokers && source.log === 'default') config.log = 'kafka';
  if (config.log === 'kafka' && !config.kafkaBrokers) {
    throw new ConfigError(`--log (${envOf('log')}): got "kafka", expected --kafka-brokers (${envOf('kafkaBrokers')}) to be set with it`);
  }
  if (config.reconnectMaxMs < config.reconnectMinMs) {
    throw new ConfigError(
      `--reconnect-max-ms (${envOf('reconnectMaxMs')}): got ${config.reconnectMaxMs}, expected at least --reconnect-min-ms (${config.reconnectMinMs})`,
    );
  }
  return { config, positionals, help };
}

/** The options part of `--help` for a command. */
export function describeSettings(accepted: readonly SettingKey[], defaults: Partial<Record<SettingKey, string>> = {}): string {
  const rows = accepted.map((key) => {
    const spec = { ...(settings[key] as SettingSpec), ...(defaults[key] !== undefined ? { default: defaults[key] } : {}) };
    const flag = `--${flagOf(key)}${spec.boolean ? '' : ` <${spec.expects.length > 24 ? 'value' : spec.expects}>`}`;
    const extra = [spec.repeatable ? 'repeatable' : '', spec.default !== undefined ? `default ${spec.default}` : '']
      .filter(Boolean)
      .join(', ');
    return `  ${flag}\n      ${spec.describe}${extra ? ` (${extra})` : ''}\n      env ${envOf(key)}; expects ${spec.expects}`;
  });
  return rows.join('\n');
}
