import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the tests beside their code (src/, streams/), which need no broker, no EVM
 * node and no devnet, and finish in well under a minute. What boots those lives under test/
 * (integration/, e2e/) and runs with everything else in `npm test`.
 */
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'streams/**/*.test.ts'],
    testTimeout: 10_000,
    hookTimeout: 10_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
