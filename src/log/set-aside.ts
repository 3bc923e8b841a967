import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** Where a devnet's previous log goes in the data directory (replaced by the next one). */
export const previousLogDir = 'previous';

/**
 * Moves the named files of the data directory (the embedded log, its WAL, the view snapshot) into
 * `<dataDir>/previous/`, after removing the same names there: a devnet started fresh keeps the log
 * of the one before it, one deep. Resolves with the names it moved (none when there was no log).
 */
export async function setAsideLogFiles(dataDir: string, names: readonly string[]): Promise<string[]> {
  const present = names.filter((name) => existsSync(join(dataDir, name)));
  if (present.length === 0) return [];
  const previous = join(dataDir, previousLogDir);
  await mkdir(previous, { recursive: true });
  for (const name of names) await rm(join(previous, name), { force: true });
  for (const name of present) await rename(join(dataDir, name), join(previous, name));
  return present;
}
