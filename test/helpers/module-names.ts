import { readdirSync } from 'node:fs';

/** The modules of a folder (its `.ts` files, tests left out), by name without `.ts`, sorted: what a registry must list. */
export function moduleNamesIn(folder: URL): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => name.slice(0, -3))
    .sort();
}
