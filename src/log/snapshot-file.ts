import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { makeDirectory } from '../config/paths.ts';
import { dirname } from 'node:path';

/**
 * The file that holds the view's snapshot (its text is encoded and checked by src/view/snapshot.ts,
 * which does no I/O). It sits beside the log it was taken from: this folder is where flashlog
 * touches the disk for the log.
 */
export type SnapshotText =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly missing: true }
  | { readonly ok: false; readonly reason: string };

/** Reads the snapshot file; a missing file is `missing`, anything unreadable a reason. */
export function readSnapshotText(path: string): SnapshotText {
  try {
    return { ok: true, text: readFileSync(path, 'utf8') };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, missing: true };
    return { ok: false, reason: `unreadable: ${(error as Error).message}` };
  }
}

/** Writes the snapshot whole or not at all: a temporary file beside it, then a rename. */
export async function writeSnapshotFile(path: string, text: string): Promise<void> {
  makeDirectory(dirname(path));
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}
