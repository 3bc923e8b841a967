import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The shared fixtures and notes (read-only), found beside the project as `../shared`. A clone
 * elsewhere points at them with FLASHLOG_SHARED_DIR (`.ci/run` sets it for a clone of a checkout
 * that has them beside it).
 */
export function sharedDir(): string {
  const candidates = [process.env.FLASHLOG_SHARED_DIR, fileURLToPath(new URL('../../../shared', import.meta.url))].filter(
    (candidate): candidate is string => Boolean(candidate),
  );
  const found = candidates.find((candidate) => existsSync(join(candidate, 'fixtures')));
  if (!found) throw new Error(`shared fixtures not found; looked in ${candidates.join(', ')} (set FLASHLOG_SHARED_DIR)`);
  return found;
}

/** Absolute path of a file under the shared directory, e.g. `sharedPath('fixtures/flashblocks/x.json')`. */
export const sharedPath = (relative: string): string => join(sharedDir(), relative);
