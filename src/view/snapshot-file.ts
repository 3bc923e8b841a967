import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { decodeSnapshot, type DecodedSnapshot } from './snapshot.ts';

/** Reads the snapshot file; a missing file is `missing`, anything unreadable a reason. */
export function readSnapshotFile(path: string): DecodedSnapshot | { readonly ok: false; readonly missing: true } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, missing: true };
    return { ok: false, reason: `unreadable: ${(error as Error).message}` };
  }
  return decodeSnapshot(text);
}

/** Writes the snapshot whole or not at all: a temporary file beside it, then a rename. */
export async function writeSnapshotFile(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, path);
}
