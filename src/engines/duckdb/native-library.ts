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

export type DuckDBBindings = typeof import("@duckdb/node-bindings");

/**
 * The driver's native binding (read.ts copies vectors through it, arrow-chunks.ts), the object the
 * driver itself uses: the module's default export, both from node_modules (a CommonJS module) and
 * in the executable (scripts/build.ts puts an unpacking loader in its place, whose default it is).
 */
export async function loadDuckDBBindings(): Promise<DuckDBBindings> {
  const module = (await import("@duckdb/node-bindings")) as unknown as { default: DuckDBBindings };
  return module.default;
}
