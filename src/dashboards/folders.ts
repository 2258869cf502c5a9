/**
 * File-system steps of generation. A dashboard folder is written under a temporary dot-name and
 * renamed into place, so the server never serves a half-written dashboard; an existing folder
 * is only ever moved aside to `<slug>.bak-<timestamp>`, never deleted (ARCHITECTURE.md §7).
 */
import { lstat, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

export type FolderFiles = Record<string, string | Uint8Array>;

export async function pathExists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

function temporaryName(name: string): string {
  return `.${name}.tmp-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Writes `files` into a fresh temporary folder under `root`; returns its path. */
export async function writeTemporaryFolder(root: string, name: string, files: FolderFiles): Promise<string> {
  const temporary = join(root, temporaryName(name));
  await mkdir(temporary);
  try {
    for (const [file, content] of Object.entries(files)) await writeFile(join(temporary, file), content);
  } catch (error) {
    await rm(temporary, { recursive: true, force: true });
    throw error;
  }
  return temporary;
}

/** "20250131T140501Z": sortable, and free of characters some file systems refuse. */
function stamp(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, "Z").replace(/[-:]/g, "");
}

/** Moves `root/name` to an unused `root/name.bak-<timestamp>[-n]`; returns the new path. */
export async function moveToBackup(root: string, name: string, now: Date): Promise<string> {
  const base = join(root, `${name}.bak-${stamp(now)}`);
  let backup = base;
  for (let n = 2; await pathExists(backup); n++) backup = `${base}-${n}`;
  await rename(join(root, name), backup);
  return backup;
}

/** Replaces a file by rename, so readers see the old or the new content, never a mix. */
export async function writeFileAtomically(path: string, content: string): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(temporary, content);
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
