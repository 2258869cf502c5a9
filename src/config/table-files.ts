/**
 * A table's `files:` (DESIGN.md §14): Parquet, CSV or NDJSON files served through a DuckDB source,
 * the format by extension, globs allowed. The glob is expanded once, when the config is read: the
 * files it matched then are the only files the table ever reads (the DuckDB engine allows exactly
 * these paths and no others, engines/duckdb/lockdown.ts), so a file added later needs a restart.
 */
import { globSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Problems } from "./problems.ts";
import type { TableFiles } from "./types.ts";

/** Extensions and the reader DuckDB uses for them. */
const FORMATS: Record<string, TableFiles["format"]> = {
  ".parquet": "parquet",
  ".csv": "csv",
  ".tsv": "csv",
  ".ndjson": "ndjson",
  ".jsonl": "ndjson",
  ".json": "ndjson",
};

const extensionOf = (path: string) => /\.[A-Za-z0-9]+$/.exec(path)?.[0]?.toLowerCase() ?? "";

/** The files of `pattern` (resolved against `baseDir`), or undefined after adding the problem at `at`. */
export function resolveTableFiles(pattern: string, baseDir: string, at: (string | number)[], problems: Problems): TableFiles | undefined {
  const absolute = resolve(baseDir, pattern);
  const extension = extensionOf(absolute);
  const format = Object.hasOwn(FORMATS, extension) ? FORMATS[extension] : undefined;
  if (format === undefined) {
    problems.add(at, `ends in ${extension === "" ? "no extension" : `'${extension}'`}, which names no format; the files' names must end in ${Object.keys(FORMATS).join(", ")}`);
    return undefined;
  }
  const paths = globSync(absolute)
    .map((path) => resolve(path))
    .filter((path) => statSync(path, { throwIfNoEntry: false })?.isFile() === true)
    .sort();
  if (paths.length === 0) {
    problems.add(at, `matches no file (${absolute}); check the path, relative to the config file's folder`);
    return undefined;
  }
  // A glob can match files of several formats only through its extension, which is fixed: one format.
  return { pattern: absolute, format, paths };
}
