/**
 * The DuckDB database of one `duckdb:` source (DESIGN.md §14 "Reads only, bounded"), opened once:
 * an in-memory DuckDB in which the source's file, if any, is attached READ_ONLY as `source`, and
 * each table with `files:` is a view `files."<name>"` over exactly the files its glob matched when
 * the config was read (read_parquet / read_csv / read_json of a list, never of the glob: DuckDB
 * checks each path it opens). Then the lockdown, before any query runs:
 *   allowed_paths = those files; enable_external_access = false (no other file, no URL, no ATTACH,
 *   no COPY … TO); no extension installed or loaded on demand; lock_configuration = true (no query
 *   can SET any of it back).
 * A query text can therefore reach no other file whatever it says; the validator, which only lets
 * configured tables through, is a second wall in front of this one.
 *
 * The driver (@duckdb/node-api, its native library) is imported here on first use, so a config
 * without a DuckDB source never loads it (native-library.ts unpacks it in the executable).
 */
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TableConfig, TableFiles } from "../../config/types.ts";
import { loadDuckDB } from "./native-library.ts";

/** The catalog the source's file is attached as; file-backed views live in the in-memory catalog. */
export const SOURCE_CATALOG = "source";
export const FILES_SCHEMA = "files";

export const sqlString = (value: string) => `'${value.replaceAll("'", "''")}'`;
export const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The table function reading a table's files, by format; several files are read as one table, columns matched by name. */
function readerOf(files: TableFiles): string {
  const list = `[${files.paths.map(sqlString).join(", ")}]`;
  switch (files.format) {
    case "parquet":
      return `read_parquet(${list}, union_by_name = true)`;
    case "csv":
      return `read_csv(${list}, union_by_name = true)`;
    case "ndjson":
      return `read_json(${list}, format = 'newline_delimited', union_by_name = true)`;
  }
}

/** Where a table is read from: its view over files, or `source.<schema>.<table>` (`source:` is `table` or `schema.table`, schema main by default). */
export function relationOf(config: TableConfig): { catalog: string; schema: string; name: string } {
  if (config.files !== undefined) return { catalog: "memory", schema: FILES_SCHEMA, name: config.name };
  const dot = config.source.indexOf(".");
  return dot < 0 ? { catalog: SOURCE_CATALOG, schema: "main", name: config.source } : { catalog: SOURCE_CATALOG, schema: config.source.slice(0, dot), name: config.source.slice(dot + 1) };
}

export const relationSql = (relation: { catalog: string; schema: string; name: string }) =>
  `${quoteName(relation.catalog)}.${quoteName(relation.schema)}.${quoteName(relation.name)}`;

export interface OpenedDuckDB {
  instance: DuckDBInstance;
  /** Problems met opening a table's files (a file that is not Parquet, CSV or JSON after all), by the table's config. */
  viewProblems: Map<TableConfig, string>;
}

/** The source's own settings (`databases.<name>.memory_limit_mb`, `.threads`). */
export interface DuckSettings {
  /** DuckDB's memory_limit, shared by the source's queries running at once: past it a sort spills to temp_directory, or the query is refused. */
  memoryLimitMb: number;
  /** DuckDB's threads; null: DuckDB's default (one per core). */
  threads: number | null;
}

/** Opens the source: the file attached read-only, one view per file-backed table, then the lockdown. */
export async function openDuckDB(path: string, tables: readonly TableConfig[], settings: DuckSettings): Promise<OpenedDuckDB> {
  const { DuckDBInstance } = await loadDuckDB();
  const instance = await DuckDBInstance.create(":memory:", {
    memory_limit: `${settings.memoryLimitMb}MiB`,
    ...(settings.threads === null ? {} : { threads: String(settings.threads) }),
    // Nothing is fetched or installed from the network, ever.
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
    // Where a sort or join larger than memory spills (DuckDB's default is ./.tmp, beside whatever the working directory is).
    temp_directory: join(tmpdir(), `arrow402-duckdb-${process.pid}`),
  });
  const setup = await instance.connect();
  const viewProblems = new Map<TableConfig, string>();
  try {
    if (path !== ":memory:") await setup.run(`ATTACH ${sqlString(path)} AS ${quoteName(SOURCE_CATALOG)} (READ_ONLY)`);
    await setup.run(`CREATE SCHEMA ${quoteName(FILES_SCHEMA)}`);
    const allowed: string[] = [];
    for (const table of tables) {
      if (table.files === undefined) continue;
      try {
        await setup.run(`CREATE VIEW ${relationSql(relationOf(table))} AS SELECT * FROM ${readerOf(table.files)}`);
        allowed.push(...table.files.paths);
      } catch (error) {
        viewProblems.set(table, firstLine(error));
      }
    }
    await lockDown(setup, allowed);
  } catch (error) {
    setup.closeSync();
    instance.closeSync();
    throw error;
  }
  setup.closeSync();
  return { instance, viewProblems };
}

async function lockDown(connection: DuckDBConnection, allowed: readonly string[]): Promise<void> {
  if (allowed.length > 0) await connection.run(`SET allowed_paths = [${[...new Set(allowed)].map(sqlString).join(", ")}]`);
  await connection.run("SET enable_external_access = false");
  await connection.run("SET lock_configuration = true");
}

/** DuckDB's message without its hints and context lines. */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim();
}
