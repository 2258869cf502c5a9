/**
 * Loads the DuckDB driver (@duckdb/node-api) on first use, so that a config without a DuckDB source
 * never loads its native library.
 */
export type DuckDBModule = typeof import("@duckdb/node-api");

let loading: Promise<DuckDBModule> | null = null;

export function loadDuckDB(): Promise<DuckDBModule> {
  loading ??= import("@duckdb/node-api");
  return loading;
}

/** The driver's native binding (read.ts copies vectors through it, arrow-chunks.ts); loaded with the driver. */
export function loadDuckDBBindings(): Promise<typeof import("@duckdb/node-bindings")> {
  return import("@duckdb/node-bindings");
}
