/** Loads what every server-side subcommand needs: the config (or the demo), its sources' engines and the catalog. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Catalog } from "../catalog.ts";
import { loadConfigFile } from "../config/load.ts";
import { MAIN_SOURCE } from "../config/sources.ts";
import type { Config, SourceConfig } from "../config/types.ts";
import { prepareDemo } from "../demo/config.ts";
import type { TableEngine } from "../engines/engine.ts";
import { describeCatalog, openEngines } from "../engines/sources.ts";
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

/** The config path of a source's location: `database.sqlite` (the one-file form) or `databases.<name>.<engine>`. */
export function sourcePath(name: string, source: SourceConfig): string {
  return name === MAIN_SOURCE && source.engine === "sqlite" ? "database.sqlite" : `databases.${name}.${source.engine}`;
}

/**
 * The engine of every source (engines/sources.ts), for an operator's command: one query worker per
 * SQLite source is plenty (the commands read on connections of their own). A SQLite file that is
 * not there is a ConfigError naming its config path, before anything is opened.
 */
export function openSources(config: Config): Map<string, TableEngine> {
  const missing = Object.entries(config.databases)
    .filter(([, source]) => source.engine === "sqlite" && !existsSync(source.path))
    .map(([name, source]) => `${sourcePath(name, source)}: no file at ${(source as { path: string }).path}`);
  if (missing.length > 0) throw new ConfigError(missing);
  return openEngines(config, { workers: 1 });
}

export function closeSources(engines: ReadonlyMap<string, TableEngine>): void {
  for (const engine of engines.values()) engine.close();
}

/** The engines and the catalog they describe; every table or column missing is a ConfigError with its config path. */
export async function openCatalog(config: Config): Promise<{ engines: Map<string, TableEngine>; catalog: Catalog }> {
  const engines = openSources(config);
  try {
    return { engines, catalog: await describeCatalog(config, engines) };
  } catch (error) {
    closeSources(engines);
    throw error;
  }
}
