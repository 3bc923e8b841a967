import { defineConfig } from 'vitest/config';

/**
 * `npm run test:unit`: the tests beside their code (src/, streams/, devnet/), which need no broker, no EVM
 * node and no devnet, and finish in well under a minute. What boots those lives under test/
 * (integration/, e2e/) and runs with everything else in `npm test`.
 */
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'streams/**/*.test.ts', 'devnet/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One worker process runs many files (a fresh one per file costs ~0.5 s of start-up and
    // imports each): every test here restores what it changes (timers, servers, subscriptions).
    isolate: false,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
