/** `arrow402 serve`: starts the server from the config, or the built-in demo (ARCHITECTURE.md §1, §11). */
import { resolve } from "node:path";
import { loadConfigFile } from "../config/load.ts";
import { createLogger } from "../ops/logs.ts";
import { handleSignals } from "../ops/signals.ts";
import { raiseRequestHeadLimit } from "../routes/header-budget.ts";
import { startServer } from "../server.ts";
import { VERSION } from "../version.ts";
import type { Config } from "../config/types.ts";
import { UsageError } from "./args.ts";
import { loadContext } from "./context.ts";
import { ensureDemoDashboards } from "./demo-dashboards.ts";

export async function serve(configPath: string | undefined, bind: string | undefined): Promise<void> {
  const context = loadContext(configPath);
  const withOverrides = (config: Config) => (bind === undefined ? config : withBind(config, bind));
  const config = withOverrides(context.config);
  if (context.isDemo) await ensureDemoDashboards(config);
  // However the process was started (no --max-http-header-size needed): see routes/header-budget.ts.
  raiseRequestHeadLimit(config.limits.maxQueryBytes);
  const server = await startServer(config);
  const { url } = server;
  server.events.subscribe(createLogger({ format: () => server.config.server.log }));
  server.events.emit({ type: "server.started", message: `arrow402 ${VERSION} serving ${server.catalog.tables.length} table(s) from ${context.source} on ${url}` });
  if (context.isDemo && config.server.log === "text") {
    console.log(`  discovery:  curl -s ${url}/api/`);
    console.log(`  free query: curl -s '${url}/api/query?query=SELECT%20*%20FROM%20tokens' -o tokens.arrow`);
    console.log(`  paid query: curl -si '${url}/api/query?query=SELECT%20*%20FROM%20swaps%20LIMIT%2010'   (402: payment required)`);
    console.log(`  dashboards: ${url}/`);
  }
  // The file is read again on SIGHUP, with the same --bind: the bind itself needs a restart.
  const path = context.isDemo ? null : resolve(context.source);
  const reload = (file: string) => () => {
    void server.reload(() => withOverrides(loadConfigFile(file)), context.source).then((outcome) => {
      // A larger max_query_bytes needs room in request heads too, as at start-up.
      if (outcome.applied) raiseRequestHeadLimit(server.config.limits.maxQueryBytes);
    });
  };
  handleSignals(server, { reload: path === null ? null : reload(path) });
}

/** `--bind HOST:PORT` replaces server.bind; a base_url that only echoed the old bind follows it. */
function withBind(config: Config, bind: string): Config {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(bind);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new UsageError(`--bind '${bind}' is not HOST:PORT, e.g. 127.0.0.1:4021 or 0.0.0.0:0`);
  const host = match[1] ?? match[2]!;
  const { server } = config;
  const echoed = server.baseUrl === `http://${hostForUrl(server.host)}:${server.port}`;
  const baseUrl = echoed ? `http://${hostForUrl(host)}:${port}` : server.baseUrl;
  return { ...config, server: { ...server, host, port, baseUrl } };
}

function hostForUrl(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "localhost";
  return host.includes(":") ? `[${host}]` : host;
}
