/** Loads what every server-side subcommand needs: the config (or the demo) and the catalog. */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfigFile } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { openReadOnly, readCatalog, type Catalog } from "../engines/sqlite/catalog.ts";
import { MAIN_SOURCE } from "../config/sources.ts";
import { prepareDemo } from "../demo/config.ts";
import { ConfigError } from "../errors.ts";

export interface Context {
  config: Config;
  /** Where the config came from, for messages. */
  source: string;
  isDemo: boolean;
}

export function loadContext(configPath: string | undefined): Context {
  const path = configPath ?? (existsSync("arrow402.yaml") ? "arrow402.yaml" : undefined);
  if (path) return { config: loadConfigFile(resolve(path)), source: path, isDemo: false };
  return { config: prepareDemo(), source: "built-in demo", isDemo: true };
}

/** The path of the config's one SQLite source; a config of other sources is a ConfigError naming the command's limit. */
export function soleSqlitePath(config: Config, command: string): { path: string; at: string } {
  const sources = Object.entries(config.databases);
  const [name, source] = sources[0] ?? [];
  if (sources.length !== 1 || source?.engine !== "sqlite") {
    throw new ConfigError([`databases: ${command} reads one SQLite source; this config has ${sources.map(([key, s]) => `${key} (${s.engine})`).join(", ")}`]);
  }
  return { path: source.path, at: name === MAIN_SOURCE ? "database.sqlite" : `databases.${name}.sqlite` };
}

export function openCatalog(config: Config, command: string): { db: Database; catalog: Catalog } {
  const { path, at } = soleSqlitePath(config, command);
  if (!existsSync(path)) throw new ConfigError([`${at}: no file at ${path}`]);
  let db: Database;
  try {
    db = openReadOnly(path);
  } catch (error) {
    throw new ConfigError([`${at}: cannot open ${path}: ${(error as Error).message}`]);
  }
  const { catalog, problems } = readCatalog(db, config.tables);
  if (problems.length > 0) throw new ConfigError(problems);
  return { db, catalog };
}
