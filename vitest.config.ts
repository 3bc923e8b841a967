import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'streams/**/*.test.ts', 'devnet/**/*.test.ts', 'test/**/*.test.ts'],
    // The shared fixtures, or one line saying how to point at them.
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: '.ci/work/vitest.json' },
  },
});
