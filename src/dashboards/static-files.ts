/**
 * Maps a request path inside a dashboard to a file that is certainly inside its folder
 * (ARCHITECTURE.md §7: paths never escape the dashboard folder). Every segment is percent-decoded
 * once and refused when it could change directory or hide a separator (`..`, `.`, `/`, `\`,
 * NUL) or names a dotfile; the final file's real path (symlinks resolved) must still lie
 * inside the folder's real path. Anything doubtful is "not found".
 */
import { realpath, stat } from "node:fs/promises";
import { join, sep } from "node:path";

const INDEX = "index.html";

function decodeSegment(raw: string): string | null {
  let segment: string;
  try {
    segment = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (segment === "" || segment.startsWith(".")) return null;
  if (/[/\\\0]/.test(segment)) return null;
  return segment;
}

async function realFile(path: string): Promise<{ real: string; isDirectory: boolean } | null> {
  try {
    const real = await realpath(path);
    const info = await stat(real);
    if (info.isFile()) return { real, isDirectory: false };
    if (info.isDirectory()) return { real, isDirectory: true };
    return null;
  } catch {
    return null;
  }
}

function inside(folder: string, path: string): boolean {
  return path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/**
 * `rest` is the still-encoded part of the URL path after `/<slug>/` ('' for the folder itself).
 * Returns the absolute real path of the file to serve, or null for 404.
 */
export async function resolveDashboardFile(folder: string, rest: string): Promise<string | null> {
  const rawSegments = rest === "" ? [] : rest.split("/");
  // A trailing slash names a directory: serve its index.html.
  if (rawSegments.at(-1) === "") rawSegments.pop();
  const segments: string[] = [];
  for (const raw of rawSegments) {
    const segment = decodeSegment(raw);
    if (segment === null) return null;
    segments.push(segment);
  }
  const root = await realFile(folder);
  if (!root?.isDirectory) return null;
  let target = await realFile(join(root.real, ...segments));
  if (target?.isDirectory && (target.real === root.real || inside(root.real, target.real))) {
    target = await realFile(join(target.real, INDEX));
  }
  if (!target || target.isDirectory) return null;
  return inside(root.real, target.real) ? target.real : null;
}
