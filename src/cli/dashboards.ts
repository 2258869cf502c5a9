/** `arrow402 dashboards [SLUG] [--force]`: the dashboard generation subcommand (ARCHITECTURE.md §7), for tables of any source. */
import { generateDashboards } from "../dashboards/generate.ts";
import { ConfigError } from "../errors.ts";
import { closeSources, loadContext, openCatalog } from "./context.ts";

export async function dashboards(configPath: string | undefined, slug: string | undefined, force: boolean): Promise<number> {
  const { config } = loadContext(configPath);
  if (!config.dashboards) {
    throw new ConfigError(["dashboards: no dashboards are configured; add a 'dashboards:' section with entries"]);
  }
  if (slug !== undefined && !config.dashboards.entries.some((e) => e.slug === slug)) {
    const known = config.dashboards.entries.map((e) => e.slug).join(", ");
    throw new ConfigError([`dashboards.entries: no dashboard with slug '${slug}'; configured: ${known}`]);
  }
  const { engines, catalog } = await openCatalog(config);
  try {
    const result = await generateDashboards({ config, engines, catalog, slug, force, log: (line) => console.log(line) });
    for (const path of result.backups) console.log(`kept the previous version as ${path}`);
    console.log(`wrote ${result.written.length} file(s); left ${result.skipped.length} existing dashboard(s) as they were` + (result.skipped.length ? " (use --force to regenerate)" : ""));
  } finally {
    closeSources(engines);
  }
  return 0;
}
