/**
 * The sources of tables (DESIGN.md §14): `database: { sqlite: ./file.sqlite }`, the one-file form,
 * is the source named `main`; `databases:` names several, each one SQLite file or one PostgreSQL
 * database or one DuckDB database (a file opened read-only, or ":memory:"). Exactly one of the two
 * keys. A table says which source serves it (`database:`, required once there are several) and,
 * for PostgreSQL and DuckDB, its name there (`source:`) or, for DuckDB, the files it is read from
 * (`files:`, table-files.ts).
 */
import { resolve } from "node:path";
import { checkPostgresUrl } from "./ledger.ts";
import { describeKind, isRecord, type ConfigPath, type Problems } from "./problems.ts";
import { resolveTableFiles } from "./table-files.ts";
import type { SourceConfig, TableConfig } from "./types.ts";

/** The one-file form's source. */
export const MAIN_SOURCE = "main";

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const DEFAULT_SCHEMA = "public";
const DEFAULT_MAX_CONNECTIONS = 8;
/**
 * DuckDB's memory_limit for a source unless `memory_limit_mb` says otherwise. DuckDB's own default
 * is 80% of the machine's memory, and one free `ORDER BY … LIMIT 1000000` over a 10M-row Parquet
 * file took ~900 MB: with a limit, sorts spill to the temporary folder or the query is refused.
 */
export const DEFAULT_DUCKDB_MEMORY_LIMIT_MB = 1024;
/** Below this, a DuckDB source cannot read a Parquet row group of DuckDB's default size. */
const MIN_DUCKDB_MEMORY_LIMIT_MB = 64;
const PG_EXAMPLE = "postgres://reader:${PG_PASSWORD}@db.internal:5432/market";
const KEYS: Record<SourceConfig["engine"], string[]> = {
  sqlite: ["sqlite"],
  postgres: ["postgres", "schema", "max_connections"],
  duckdb: ["duckdb", "memory_limit_mb", "threads"],
};
const ENGINES_WRITTEN = "sqlite: <path>, postgres: <url> or duckdb: <path>";
/** A DuckDB source with no database file: its tables are all served from files. */
export const DUCKDB_MEMORY = ":memory:";

export function resolveSources(database: unknown, databases: unknown, baseDir: string, problems: Problems): Record<string, SourceConfig> {
  if (database !== undefined && databases !== undefined) {
    problems.add(["databases"], "and database: are both set; keep one: database: { sqlite: … } for one SQLite file, or databases: for named sources");
    return {};
  }
  if (database === undefined && databases === undefined) {
    problems.add(["database"], "is required: write database: { sqlite: ./market.sqlite }, or databases: with named sources");
    return {};
  }
  if (database !== undefined) {
    // The shape was checked by the schema.
    const path = isRecord(database) && typeof database.sqlite === "string" ? database.sqlite : "";
    return path === "" ? {} : { [MAIN_SOURCE]: { engine: "sqlite", path: resolve(baseDir, path) } };
  }
  if (!isRecord(databases)) return {};
  const sources: Record<string, SourceConfig> = {};
  for (const [name, entry] of Object.entries(databases)) {
    const source = resolveSource(name, entry, baseDir, problems);
    if (source !== undefined) sources[name] = source;
  }
  if (Object.keys(databases).length === 0) problems.add(["databases"], "names no source; add one, e.g. main: { sqlite: ./market.sqlite }");
  return sources;
}

function resolveSource(name: string, entry: unknown, baseDir: string, problems: Problems): SourceConfig | undefined {
  const at = ["databases", name];
  if (!NAME.test(name)) problems.add(at, "is not a usable source name: letters, digits, _ and -, starting with a letter or _");
  if (!isRecord(entry)) {
    problems.add(at, `got ${describeKind(entry)}; write ${ENGINES_WRITTEN}`);
    return undefined;
  }
  const engines = (Object.keys(KEYS) as SourceConfig["engine"][]).filter((engine) => entry[engine] !== undefined);
  if (engines.length !== 1) {
    problems.add(at, engines.length === 0 ? `names no engine: write ${ENGINES_WRITTEN}` : `names ${engines.join(" and ")}: keep one`);
    return undefined;
  }
  const engine = engines[0]!;
  for (const key of Object.keys(entry)) {
    if (!KEYS[engine].includes(key)) problems.add([...at, key], `is not a setting of a ${engine} source; use ${KEYS[engine].join(", ")}`);
  }
  const value = entry[engine];
  if (typeof value !== "string" || value === "") {
    const expected = { sqlite: "the path of the file", postgres: `a URL, e.g. ${PG_EXAMPLE}`, duckdb: `the path of a DuckDB file, or "${DUCKDB_MEMORY}" for tables served from files only` };
    problems.add([...at, engine], `got ${describeKind(value)}; write ${expected[engine]}`);
    return undefined;
  }
  if (engine === "sqlite") return { engine, path: resolve(baseDir, value) };
  if (engine === "duckdb") {
    const memoryLimitMb = wholeNumber(entry, "memory_limit_mb", MIN_DUCKDB_MEMORY_LIMIT_MB, at, problems, "megabytes, e.g. 1024");
    const threads = wholeNumber(entry, "threads", 1, at, problems, "threads, e.g. 2");
    if (memoryLimitMb === undefined || threads === undefined) return undefined;
    return { engine, path: value === DUCKDB_MEMORY ? DUCKDB_MEMORY : resolve(baseDir, value), memoryLimitMb: memoryLimitMb ?? DEFAULT_DUCKDB_MEMORY_LIMIT_MB, threads };
  }
  if (!checkPostgresUrl(value, [...at, engine], problems, PG_EXAMPLE)) return undefined;
  const schema = entry.schema ?? DEFAULT_SCHEMA;
  if (typeof schema !== "string" || schema === "") {
    problems.add([...at, "schema"], `got ${describeKind(schema)}; write the schema's name, e.g. public`);
    return undefined;
  }
  const max = entry.max_connections ?? DEFAULT_MAX_CONNECTIONS;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1) {
    problems.add([...at, "max_connections"], `got ${describeKind(max)}; write a whole number of at least 1`);
    return undefined;
  }
  return { engine, url: value, schema, maxConnections: max };
}

/** An optional whole-number setting of a source: its value, null when absent, undefined (a problem added) when not a whole number of at least `min`. */
function wholeNumber(entry: Record<string, unknown>, key: string, min: number, at: ConfigPath, problems: Problems, example: string): number | null | undefined {
  const value = entry[key];
  if (value === undefined) return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= min) return value;
  problems.add([...at, key], `got ${describeKind(value)}; write a whole number of at least ${min} (${example})`);
  return undefined;
}

/** Checks each table's `database:`, `source:` and `files:` against the sources; fills in their defaults. */
export function assignSources(tables: TableConfig[], rawTables: unknown, sources: Record<string, SourceConfig>, baseDir: string, problems: Problems): void {
  const names = Object.keys(sources);
  const raw = Array.isArray(rawTables) ? rawTables : [];
  tables.forEach((table, index) => {
    const entry = isRecord(raw[index]) ? raw[index] : {};
    const at = ["tables", index];
    const database = typeof entry.database === "string" ? entry.database : undefined;
    if (database === undefined) {
      if (names.length > 1) problems.add([...at, "database"], `is required with several sources: write one of ${names.join(", ")}`);
      table.database = names[0] ?? MAIN_SOURCE;
    } else {
      if (!names.includes(database) && names.length > 0) problems.add([...at, "database"], `names no source; write one of ${names.join(", ")}`);
      table.database = database;
    }
    const source = typeof entry.source === "string" ? entry.source : undefined;
    if (source !== undefined && sources[table.database]?.engine === "sqlite") {
      problems.add([...at, "source"], "is for tables of other engines; a SQLite table is served under its own name: remove source:, or rename the table");
    }
    table.source = source ?? table.name;
    const files = typeof entry.files === "string" ? entry.files : undefined;
    const engine = sources[table.database]?.engine;
    if (files !== undefined) {
      if (engine !== undefined && engine !== "duckdb") {
        problems.add([...at, "files"], `is for tables of DuckDB sources; '${table.database}' is a ${engine} source: name a source with duckdb: <path or ":memory:">, or remove files:`);
      } else if (source !== undefined) {
        problems.add([...at, "source"], "and files: are both set; a table is read from a table of its source or from files: keep one");
      } else {
        const resolved = resolveTableFiles(files, baseDir, [...at, "files"], problems);
        if (resolved !== undefined) table.files = resolved;
      }
    } else if (engine === "duckdb" && (sources[table.database] as { path: string }).path === DUCKDB_MEMORY) {
      problems.add([...at, "files"], `is required: the source '${table.database}' is ":memory:", which holds no table; write files: ./data/*.parquet, or a DuckDB file as databases.${table.database}.duckdb`);
    }
  });
}

/** The SQLite files among the sources (the ledger must not be one of them). */
export function sqlitePaths(sources: Record<string, SourceConfig>): string[] {
  return Object.values(sources).flatMap((source) => (source.engine === "sqlite" ? [source.path] : []));
}
