import { sharedDir } from './shared.ts';

/**
 * Before any test: the shared fixtures must be found, or the run stops with one line saying how
 * (instead of most gateway, derivation and prover tests failing one by one with the same cause).
 */
export default function setup(): void {
  try {
    sharedDir();
  } catch (error) {
    process.stderr.write(
      `flashlog tests: ${(error as Error).message}: FLASHLOG_SHARED_DIR names the folder holding fixtures/ (README, "Requirements")\n`,
    );
    process.exit(2);
  }
}
