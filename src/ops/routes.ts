/**
 * Route labels for metrics and logs: a fixed, small set of names (`/api/query`, `/api/table/{name}`,
 * `/<slug>/*` for configured dashboards…), never the raw path, so a hostile client inventing URLs
 * cannot create new time series. Plain data; anything else is `other`.
 */

/** Exact paths and their labels. */
const EXACT = new Map<string, string>([
  ["/api", "/api/"],
  ["/api/", "/api/"],
  ["/api/query", "/api/query"],
  ["/api/checkout.js", "/api/checkout.js"],
  ["/healthz", "/healthz"],
  ["/readyz", "/readyz"],
  ["/metrics", "/metrics"],
  ["/mcp", "/mcp"],
  ["/", "/"],
]);

/** Path prefixes and their labels, first match wins. */
const PREFIXES: [prefix: string, label: string][] = [["/api/table/", "/api/table/{name}"]];

export const OTHER_ROUTE = "other";

/** The label of `pathname`; `dashboardSlugs` are the configured (enabled) dashboards. */
export function routeLabel(pathname: string, dashboardSlugs: ReadonlySet<string>): string {
  const exact = EXACT.get(pathname);
  if (exact !== undefined) return exact;
  for (const [prefix, label] of PREFIXES) if (pathname.startsWith(prefix)) return label;
  const slug = pathname.slice(1).split("/", 1)[0] ?? "";
  return dashboardSlugs.has(slug) ? `/${slug}/*` : OTHER_ROUTE;
}
