/** `arrow402 serve`: starts the server from the config, or the built-in demo (DESIGN.md §1). */
import { startServer } from "../server.ts";
import { VERSION } from "../version.ts";
import { loadContext, openCatalog } from "./context.ts";
import { ensureDemoDashboards } from "./demo-dashboards.ts";

export async function serve(configPath: string | undefined): Promise<void> {
  const context = loadContext(configPath);
  const { config } = context;
  const { db, catalog } = openCatalog(config);
  if (context.isDemo) await ensureDemoDashboards(config, db, catalog);
  db.close();
  const server = startServer(config);
  const { url } = server;
  console.log(`arrow402 ${VERSION} serving ${catalog.tables.length} table(s) from ${context.source} on ${url}`);
  if (context.isDemo) {
    console.log(`  discovery:  curl -s ${url}/api/`);
    console.log(`  free query: curl -s '${url}/api/query?query=SELECT%20*%20FROM%20tokens' -o tokens.arrow`);
    console.log(`  paid query: curl -si '${url}/api/query?query=SELECT%20*%20FROM%20swaps%20LIMIT%2010'   (402: payment required)`);
    console.log(`  dashboards: ${url}/`);
  }
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
