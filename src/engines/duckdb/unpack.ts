/**
 * DuckDB's native library in the single executable (DESIGN.md §14 "One executable still"): the
 * executable embeds the driver's binding (duckdb.node) and the library it links to (libduckdb.so,
 * found beside it through its RUNPATH $ORIGIN). A native library cannot be loaded from inside the
 * executable, so on first use both are written to a cache folder and loaded from there:
 *   $ARROW402_CACHE_DIR, else $XDG_CACHE_HOME/arrow402, else ~/.cache/arrow402
 * in a folder per DuckDB version and platform (`duckdb-1.5.6-linux-x64/`), written once (a file
 * of the right size is reused; a partial one is replaced through a rename). scripts/build.ts puts
 * this in place of the driver's own loader; run from source, the driver loads from node_modules.
 */
import { existsSync, mkdirSync, renameSync, statSync, writeFileSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";

/** The folder the embedded native library is unpacked to (README "Parquet and DuckDB tables"). */
export function cacheFolder(env: Record<string, string | undefined> = process.env): string {
  if (env.ARROW402_CACHE_DIR) return env.ARROW402_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "arrow402");
}

/** Writes `embedded` (a path inside the executable) to `folder` unless it is there already; its path there. */
function unpacked(embedded: string, folder: string): string {
  const target = join(folder, basename(embedded).replace(/-[a-z0-9]{8}(\.[a-z]+)$/, "$1"));
  const bytes = readFileSync(embedded);
  if (existsSync(target) && statSync(target).size === bytes.length) return target;
  const partial = `${target}.${process.pid}.partial`;
  writeFileSync(partial, bytes, { mode: 0o755 });
  renameSync(partial, target);
  return target;
}

/** The driver's binding, loaded from the cache folder: what `require("@duckdb/node-bindings")` returns. */
export function loadEmbeddedBinding(library: string, binding: string, version: string): unknown {
  const folder = join(cacheFolder(), `duckdb-${version}-${process.platform}-${process.arch}`);
  try {
    mkdirSync(folder, { recursive: true });
    unpacked(library, folder);
    const module = { exports: {} };
    process.dlopen(module, unpacked(binding, folder));
    return module.exports;
  } catch (error) {
    throw new Error(
      `DuckDB's native library cannot be unpacked to ${folder} (${error instanceof Error ? error.message : String(error)}): set ARROW402_CACHE_DIR to a writable folder`,
    );
  }
}
