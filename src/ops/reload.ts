/**
 * What a SIGHUP reload may change (ARCHITECTURE.md §11 "Operations"). The new config is applied as a
 * whole, in one step, except the settings a running server cannot change — the address it listens
 * on, the database file, the ledger, and the limits its query workers were started with — which
 * keep their running values and are reported as needing a restart. Plain data: one list of each.
 */
import type { Config } from "../config/types.ts";

interface Setting {
  path: string;
  read(config: Config): unknown;
}

/** Settings only a restart applies. */
export const NEEDS_RESTART: Setting[] = [
  { path: "server.bind", read: (c) => [c.server.host, c.server.port] },
  { path: "databases", read: (c) => c.databases },
  { path: "ledger", read: (c) => c.ledger },
  { path: "limits.max_rows", read: (c) => c.limits.maxRows },
  { path: "limits.query_timeout_ms", read: (c) => c.limits.queryTimeoutMs },
  { path: "limits.send_timeout_ms", read: (c) => c.limits.sendTimeoutMs },
  { path: "limits.spill_budget_mb", read: (c) => c.limits.spillBudgetMb },
  { path: "limits.unsent_budget_mb", read: (c) => c.limits.unsentBudgetMb },
  { path: "limits.keep_alive_seconds", read: (c) => c.limits.keepAliveSeconds },
];

/** Settings a reload applies (reported by path when they change; values are never shown, some are secrets). */
export const RELOADABLE: Setting[] = [
  { path: "server.base_url", read: (c) => c.server.baseUrl },
  { path: "server.cors_origins", read: (c) => c.server.corsOrigins },
  { path: "server.trust_proxy", read: (c) => c.server.trustProxy },
  { path: "server.metrics", read: (c) => c.server.metrics },
  { path: "server.metrics_token", read: (c) => c.server.metricsToken },
  { path: "server.log", read: (c) => c.server.log },
  { path: "server.shutdown_ms", read: (c) => c.server.shutdownMs },
  { path: "facilitator", read: (c) => c.facilitator },
  { path: "payment", read: (c) => c.payment },
  { path: "limits.max_query_bytes", read: (c) => c.limits.maxQueryBytes },
  { path: "limits.max_concurrent_per_client", read: (c) => c.limits.maxConcurrentPerClient },
  { path: "limits.mcp_max_rows", read: (c) => c.limits.mcpMaxRows },
  { path: "limits.mcp_max_bytes", read: (c) => c.limits.mcpMaxBytes },
  { path: "limits.receive_timeout_ms", read: (c) => c.limits.receiveTimeoutMs },
  { path: "limits.max_refused_payments_per_minute", read: (c) => c.limits.maxRefusedPaymentsPerMinute },
  { path: "limits.client_ipv6_prefix", read: (c) => c.limits.clientIpv6Prefix },
  { path: "limits.max_replays", read: (c) => c.limits.maxReplays },
  { path: "rpc_urls", read: (c) => c.rpcUrls },
  { path: "tokens", read: (c) => c.tokens },
  { path: "tables", read: (c) => c.tables },
  { path: "dashboards", read: (c) => c.dashboards },
];

export interface ReloadPlan {
  /** The config to run: the new one, with the running values of what needs a restart. */
  config: Config;
  changed: string[];
  needsRestart: string[];
}

export function planReload(running: Config, next: Config): ReloadPlan {
  const differs = (setting: Setting) => !same(setting.read(running), setting.read(next));
  const needsRestart = NEEDS_RESTART.filter(differs).map((setting) => setting.path);
  let changed = RELOADABLE.filter(differs).map((setting) => setting.path);
  // A base URL that moves with the bind address (its default) names an address not listened on yet.
  const keepBaseUrl = needsRestart.includes("server.bind") && changed.includes("server.base_url");
  if (keepBaseUrl) {
    changed = changed.filter((path) => path !== "server.base_url");
    needsRestart.push("server.base_url");
  }
  const config: Config = {
    ...next,
    server: {
      ...next.server,
      host: running.server.host,
      port: running.server.port,
      baseUrl: keepBaseUrl ? running.server.baseUrl : next.server.baseUrl,
    },
    databases: running.databases,
    ledger: running.ledger,
    limits: {
      ...next.limits,
      maxRows: running.limits.maxRows,
      queryTimeoutMs: running.limits.queryTimeoutMs,
      sendTimeoutMs: running.limits.sendTimeoutMs,
      spillBudgetMb: running.limits.spillBudgetMb,
      keepAliveSeconds: running.limits.keepAliveSeconds,
    },
  };
  return { config, changed, needsRestart };
}

function same(a: unknown, b: unknown): boolean {
  const text = (value: unknown) => JSON.stringify(value, (_key, item) => (typeof item === "bigint" ? `${item}n` : item));
  return text(a) === text(b);
}
