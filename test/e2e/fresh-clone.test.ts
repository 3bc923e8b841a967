import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/context.ts';

/**
 * `npm test` in a checkout with no shared fixtures beside it (a fresh clone elsewhere): one line
 * saying what is missing and how to point at it, exit 2, before any test runs, instead of most
 * gateway tests failing one by one.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = tempDir('flashlog-fresh-clone-');
afterAll(() => dir.remove());

describe('the tests in a checkout without the shared fixtures', () => {
  it('stop at once with one line naming FLASHLOG_SHARED_DIR, exit 2', () => {
    const checkout = join(dir.path, 'clone', 'flashlog');
    mkdirSync(join(checkout, 'test', 'helpers'), { recursive: true });
    for (const file of ['package.json', 'vitest.config.ts', 'test/helpers/global-setup.ts', 'test/helpers/shared.ts'])
      copyFileSync(join(root, file), join(checkout, file));
    writeFileSync(join(checkout, 'test', 'any.test.ts'), "import { it } from 'vitest';\nit('runs', () => {});\n");
    symlinkSync(join(root, 'node_modules'), join(checkout, 'node_modules'));
    const env = { ...process.env };
    delete env.FLASHLOG_SHARED_DIR;
    const run = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run'], {
      cwd: checkout,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(2);
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('flashlog tests:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`looked in ${join(dir.path, 'clone', 'shared')}`);
    expect(lines[0]).toContain('FLASHLOG_SHARED_DIR');
    expect(run.stdout).not.toMatch(/✓ runs|1 passed/);
  }, 150_000);
});
