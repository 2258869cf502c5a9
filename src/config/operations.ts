/**
 * The operations keys of `server:` (ARCHITECTURE.md §11 "Operations"): whether `GET /metrics` is served
 * and the bearer token it then requires, the log format, and how long SIGTERM drains. Shapes are
 * checked by the schema; this adds what a shape cannot say.
 */
import { DEFAULTS } from "./schema.ts";
import type { Problems } from "./problems.ts";
import type { Config, LogFormat } from "./types.ts";

export type OperationsSettings = Pick<Config["server"], "metrics" | "metricsToken" | "log" | "shutdownMs">;

export function resolveOperations(section: Record<string, unknown>, problems: Problems): OperationsSettings | undefined {
  const { metrics = DEFAULTS.metrics, metrics_token: token, log = DEFAULTS.log, shutdown_ms: shutdownMs = DEFAULTS.shutdownMs } = section;
  // A token without metrics is a sign the operator expects /metrics to be served: say so rather than ignore it.
  if (typeof token === "string" && token !== "" && metrics !== true) {
    problems.add(["server", "metrics_token"], "has no effect while server.metrics is not true; set server.metrics: true or remove the token");
  }
  if (typeof metrics !== "boolean" || (token !== undefined && typeof token !== "string") || (log !== "text" && log !== "json")) return undefined;
  if (typeof shutdownMs !== "number" || !Number.isInteger(shutdownMs) || shutdownMs < 0) return undefined;
  return { metrics, metricsToken: typeof token === "string" ? token : null, log: log as LogFormat, shutdownMs };
}
