/** The demo ships its dashboards: generated over the demo data on first run (ARCHITECTURE.md §7). */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/types.ts";
import { generateDashboards } from "../dashboards/generate.ts";
import { closeSources, openCatalog } from "./context.ts";

export async function ensureDemoDashboards(config: Config): Promise<void> {
  if (!config.dashboards || existsSync(join(config.dashboards.root, "index.html"))) return;
  const { engines, catalog } = await openCatalog(config);
  try {
    await generateDashboards({ config, engines, catalog });
  } finally {
    closeSources(engines);
  }
}
