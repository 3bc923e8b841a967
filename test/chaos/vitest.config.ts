import { defineConfig } from 'vitest/config';

/**
 * `npm run chaos`: the fault-injection scenarios, one file at a time (they start brokers, devnets
 * and kill processes, and their figures mean little when they share 2 cores with each other).
 */
export default defineConfig({
  test: {
    root: new URL('../../', import.meta.url).pathname,
    include: ['test/chaos/**/*.chaos.ts'],
    globalSetup: ['test/chaos/report-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    reporters: ['default', 'json'],
    outputFile: { json: '.ci/work/chaos-vitest.json' },
  },
});
