import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError, FlashlogError, errorMessage } from '../errors.ts';
import { envOf, flagOf, type Config, type SettingKey } from './settings.ts';

/**
 * Makes `path` a writable directory, creating what is missing one level at a time.
 *
 * Why not `mkdirSync(path, { recursive: true })`: on Linux, Node 24's recursive mkdir of a path
 * under /proc (`/proc/nope`) never returns: mkdir answers ENOENT for a parent that exists, and the
 * recursion retries it forever inside one synchronous call, so no JavaScript (a SIGTERM handler
 * included) runs again. One level at a time, the same mkdir fails at once with its error.
 *
 * @example makeDirectory('./data/previous')
 */
export function makeDirectory(path: string): void {
  const missing: string[] = [];
  for (let at = resolve(path); !existsSync(at); at = dirname(at)) {
    missing.unshift(at);
    if (dirname(at) === at) break;
  }
  for (const directory of missing) {
    try {
      mkdirSync(directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  if (!statSync(path).isDirectory()) throw new FlashlogError('PATH_INVALID', `${path} is not a directory`);
  accessSync(path, constants.W_OK);
}

/** A path setting in use by a command, and what it must be. */
interface PathInUse {
  readonly key: SettingKey;
  readonly path: string;
  /** `directory`: created and writable; `file-to-write`: its directory created and writable; `file-to-read`: readable. */
  readonly kind: 'directory' | 'file-to-write' | 'file-to-read';
}

/**
 * The path settings a command with these settings will use. --data-dir holds the embedded log, the
 * gateway's view snapshot (unless --view-snapshot names another file or "off") and the op-geth
 * devnet's node; a command that uses none of those (a Kafka `tail`, a devnet on EDR) does not
 * create it.
 */
export function pathsInUse(config: Config, accepted: readonly SettingKey[]): PathInUse[] {
  const takes = (key: SettingKey) => accepted.includes(key);
  const paths: PathInUse[] = [];
  const snapshotInDataDir = takes('viewSnapshot') && !config.viewSnapshot;
  if (takes('dataDir') && (config.log === 'embedded' || snapshotInDataDir || (takes('opGeth') && config.opGeth)))
    paths.push({ key: 'dataDir', path: config.dataDir, kind: 'directory' });
  if (takes('viewSnapshot') && config.viewSnapshot && config.viewSnapshot !== 'off')
    paths.push({ key: 'viewSnapshot', path: config.viewSnapshot, kind: 'file-to-write' });
  for (const key of ['simulateGenesis', 'rollupConfig'] as const)
    if (takes(key) && config[key]) paths.push({ key, path: config[key], kind: 'file-to-read' });
  return paths;
}

/**
 * Checks every path setting a command will use before it starts anything: a directory that
 * cannot be created or written, a file that cannot be read, is one ConfigError naming the setting
 * (the CLI's exit 2).
 *
 * @example checkPathSettings(config, command.settings) // --data-dir (FLASHLOG_DATA_DIR): cannot create or write "/proc/nope" …
 */
export function checkPathSettings(config: Config, accepted: readonly SettingKey[]): void {
  for (const { key, path, kind } of pathsInUse(config, accepted)) {
    const where = `--${flagOf(key)} (${envOf(key)})`;
    try {
      if (kind === 'directory') makeDirectory(path);
      else if (kind === 'file-to-write') makeDirectory(dirname(path));
      else accessSync(path, constants.R_OK);
    } catch (error) {
      const expected =
        kind === 'directory'
          ? 'a directory flashlog can create and write'
          : kind === 'file-to-write'
            ? 'a file in a directory flashlog can create and write'
            : 'a readable file';
      throw new ConfigError(
        `${where}: got ${JSON.stringify(path)}, cannot ${kind === 'file-to-read' ? 'read it' : 'create or write it'} (${errorMessage(error)}); expected ${expected}`,
      );
    }
  }
}
