/**
 * The engines of the configured sources (DESIGN.md §14), one per `databases:` entry, and the
 * catalog they describe together. The one place that knows which engine serves which kind of
 * source: a third engine is a case here and a folder beside sqlite/.
 */
import type { Catalog, TableInfo } from "../catalog.ts";
import type { Config, SourceConfig } from "../config/types.ts";
import { ConfigError } from "../errors.ts";
import { foldCase } from "../identifiers.ts";
import type { TableEngine } from "./engine.ts";
import { DuckDBEngine } from "./duckdb/engine.ts";
import { PostgresEngine } from "./postgres/engine.ts";
import { SqliteEngine } from "./sqlite/engine.ts";

export interface EngineOptions {
  /** Query workers of a SQLite engine (default: one per core, at least 2). */
  workers?: number;
}

/** An engine per source, in config order; a source no engine can serve is a ConfigError. */
export function openEngines(config: Config, options: EngineOptions = {}): Map<string, TableEngine> {
  const engines = new Map<string, TableEngine>();
  try {
    for (const [name, source] of Object.entries(config.databases)) engines.set(name, openEngine(name, source, config, options));
  } catch (error) {
    for (const engine of engines.values()) engine.close();
    throw error;
  }
  return engines;
}

function openEngine(name: string, source: SourceConfig, config: Config, options: EngineOptions): TableEngine {
  switch (source.engine) {
    case "sqlite":
      return new SqliteEngine(source.path, config.limits, options.workers);
    case "postgres":
      return new PostgresEngine({ name, url: source.url, schema: source.schema, maxConnections: source.maxConnections }, config.limits);
    case "duckdb":
      return new DuckDBEngine(
        { name, path: source.path, tables: config.tables.filter((table) => table.database === name), settings: { memoryLimitMb: source.memoryLimitMb, threads: source.threads } },
        config.limits,
      );
  }
}

/** The configured tables as their sources have them, in config order; every one missing is a ConfigError. */
export async function describeCatalog(config: Config, engines: ReadonlyMap<string, TableEngine>): Promise<Catalog> {
  const byIndex = new Map<number, TableInfo>();
  const problems: string[] = [];
  for (const [name, engine] of engines) {
    const tables = config.tables.map((table, index) => ({ config: table, index })).filter(({ config: table }) => table.database === name);
    if (tables.length === 0) continue;
    const described = await engine.describe(tables);
    problems.push(...described.problems);
    described.tables.forEach((table) => byIndex.set(tables.find(({ config: t }) => t === table.config)!.index, table));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const tables = [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, table]) => table);
  const byName = new Map(tables.map((table) => [foldCase(table.name), table]));
  return { tables, table: (name) => byName.get(foldCase(name)) };
}
