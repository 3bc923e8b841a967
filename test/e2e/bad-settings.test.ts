import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';
import { spawnFlashlog } from '../helpers/flashlog-process.ts';

/**
 * A setting that cannot work stops the command before anything starts, with one line naming the
 * setting and exit 2; SIGTERM ends a command at any point. `run --devnet --denim --data-dir
 * /proc/nope` used to hang (a recursive mkdir that never returns) and ignore SIGTERM.
 */
const bin = fileURLToPath(new URL('../../bin/flashlog.js', import.meta.url));
const dirs: { remove(): void }[] = [];
afterAll(() => {
  for (const dir of dirs) dir.remove();
});

/** Runs the CLI to its end; a process still running after `killAfterMs` is killed (code null). */
function flashlog(args: string[], killAfterMs = 90_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('bad path settings exit before anything starts', () => {
  it.each([
    { name: 'run --devnet --denim', args: ['run', '--devnet', '--denim', '--port', '0', '--no-metrics'] },
    { name: 'ingest', args: ['ingest', '--source', 'blocks', '--rpc', 'http://127.0.0.1:9', '--no-metrics'] },
    { name: 'devnet --op-geth', args: ['devnet', '--op-geth', '/bin/true', '--no-metrics'] },
  ])(
    '$name --data-dir /proc/nope: one line naming --data-dir, exit 2',
    async ({ args }) => {
      const { code, stdout, stderr } = await flashlog([...args, '--data-dir', '/proc/nope']);
      expect(code, stderr).toBe(2);
      expect(stdout).toBe('');
      expect(stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(stderr).toMatch(/^flashlog \S+: --data-dir \(FLASHLOG_DATA_DIR\): got "\/proc\/nope", cannot create or write it \(ENOENT/);
    },
    120_000,
  );

  it('serve --view-snapshot in a directory that cannot be made: one line naming --view-snapshot, exit 2', async () => {
    const dir = tempDir('flashlog-bad-settings-');
    dirs.push(dir);
    const { code, stderr } = await flashlog([
      'serve',
      '--rpc',
      'http://127.0.0.1:9',
      '--data-dir',
      dir.path,
      '--view-snapshot',
      '/proc/nope/view.json',
      '--port',
      '0',
    ]);
    expect(code, stderr).toBe(2);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^flashlog serve: --view-snapshot \(FLASHLOG_VIEW_SNAPSHOT\): got "\/proc\/nope\/view.json"/);
  }, 120_000);
});

describe('SIGTERM ends the process', () => {
  it('run --devnet --denim, signalled while its devnet starts, exits', async () => {
    const dir = tempDir('flashlog-sigterm-');
    dirs.push(dir);
    const run = spawnFlashlog(['run', '--devnet', '--denim', '--data-dir', dir.path, '--port', '0', '--no-metrics']);
    // The first line is logged once the signal handlers are in place, before the devnet starts.
    await run.waitFor((line) => line.msg === 'source decided', 60_000);
    const killer = setTimeout(() => run.child.kill('SIGKILL'), 90_000);
    const code = await run.stop('SIGTERM');
    clearTimeout(killer);
    expect(run.child.signalCode, run.stderr()).not.toBe('SIGKILL');
    expect(code).toBe(0);
  }, 180_000);
});
