/** Loads what every server-side subcommand needs: the config (or the demo) and the catalog. */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { loadConfigFile } from "../config/load.ts";
import type { Config } from "../config/types.ts";
import { openReadOnly, readCatalog, type Catalog } from "../engines/sqlite/catalog.ts";
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

export function openCatalog(config: Config): { db: Database; catalog: Catalog } {
  if (!existsSync(config.database.sqlite)) {
    throw new ConfigError([`database.sqlite: no file at ${config.database.sqlite}`]);
  }
  let db: Database;
  try {
    db = openReadOnly(config.database.sqlite);
  } catch (error) {
    throw new ConfigError([`database.sqlite: cannot open ${config.database.sqlite}: ${(error as Error).message}`]);
  }
  const { catalog, problems } = readCatalog(db, config.tables);
  if (problems.length > 0) throw new ConfigError(problems);
  return { db, catalog };
}
