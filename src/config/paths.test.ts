import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { checkPathSettings, makeDirectory, pathsInUse } from './paths.ts';
import { parseConfig, type SettingKey } from './settings.ts';

const root = mkdtempSync(join(tmpdir(), 'flashlog-paths-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const configOf = (argv: string[], accepted: SettingKey[]) => parseConfig(argv, {}, accepted).config;

describe('makeDirectory', () => {
  it('creates missing parents one level at a time', () => {
    const path = join(root, 'a', 'b', 'c');
    makeDirectory(path);
    expect(statSync(path).isDirectory()).toBe(true);
    makeDirectory(path); // already there: nothing to do
  });

  it('fails at once under /proc, where a recursive mkdir never returns', () => {
    expect(() => makeDirectory('/proc/flashlog-nope/data')).toThrow(/ENOENT/);
  });

  it('refuses a file and a directory it cannot write', () => {
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    expect(() => makeDirectory(file)).toThrow(expect.objectContaining({ code: 'PATH_INVALID', message: `${file} is not a directory` }));
    if (process.getuid?.() === 0) return; // root writes anywhere
    const locked = join(root, 'locked');
    makeDirectory(locked);
    chmodSync(locked, 0o500);
    expect(() => makeDirectory(locked)).toThrow(/EACCES/);
  });
});

describe('checkPathSettings', () => {
  it('names --data-dir, its variable and the path when the directory cannot be made', () => {
    const accepted: SettingKey[] = ['log', 'dataDir'];
    const config = configOf(['--data-dir', '/proc/flashlog-nope'], accepted);
    expect(() => checkPathSettings(config, accepted)).toThrow(ConfigError);
    expect(() => checkPathSettings(config, accepted)).toThrow(
      /^--data-dir \(FLASHLOG_DATA_DIR\): got "\/proc\/flashlog-nope", cannot create or write it \(ENOENT.*expected a directory/,
    );
  });

  it("checks a --view-snapshot file's directory and a --rollup-config file", () => {
    const snapshot: SettingKey[] = ['log', 'dataDir', 'viewSnapshot'];
    expect(() => checkPathSettings(configOf(['--data-dir', root, '--view-snapshot', '/proc/x/view.json'], snapshot), snapshot)).toThrow(
      /^--view-snapshot \(FLASHLOG_VIEW_SNAPSHOT\): got "\/proc\/x\/view.json"/,
    );
    const rollup: SettingKey[] = ['rollupConfig'];
    expect(() => checkPathSettings(configOf(['--rollup-config', join(root, 'missing.json')], rollup), rollup)).toThrow(
      /^--rollup-config \(FLASHLOG_ROLLUP_CONFIG\): .*missing\.json.*ENOENT/,
    );
  });

  it('creates --data-dir only for a command that uses it', () => {
    const dataDir = join(root, 'unused');
    // A Kafka reader without a snapshot keeps nothing in --data-dir.
    const kafkaTail: SettingKey[] = ['log', 'dataDir', 'kafkaBrokers'];
    const config = configOf(['--data-dir', dataDir, '--kafka-brokers', '127.0.0.1:9092'], kafkaTail);
    expect(pathsInUse(config, kafkaTail)).toEqual([]);
    checkPathSettings(config, kafkaTail);
    expect(existsSync(dataDir)).toBe(false);
    const embedded: SettingKey[] = ['log', 'dataDir'];
    checkPathSettings(configOf(['--data-dir', dataDir], embedded), embedded);
    expect(statSync(dataDir).isDirectory()).toBe(true);
  });
});
