/** The demo ships its dashboards: generated over the demo data on first run (ARCHITECTURE.md §7). */
import type { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/types.ts";
import { generateDashboards } from "../dashboards/generate.ts";
import type { Catalog } from "../engines/sqlite/catalog.ts";

export async function ensureDemoDashboards(config: Config, db: Database, catalog: Catalog): Promise<void> {
  if (!config.dashboards || existsSync(join(config.dashboards.root, "index.html"))) return;
  await generateDashboards({ config, db, catalog });
}
