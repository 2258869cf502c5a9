/**
 * The `dashboards:` section (ARCHITECTURE.md §7): the dashboards root folder and one entry per
 * dashboard. A slug becomes the first URL path segment (`/<slug>/`), so it is restricted to a safe
 * pattern (checked by the schema), `api`, `mcp`, `healthz`, `readyz` and `metrics` are reserved for the
 * server's own routes, and slugs are unique.
 * Each entry charts a configured table; its name is stored as configured. A table that sells its
 * schema (a `metadata_price` tag) gets no dashboard: the page would publish its columns, their
 * types and a snapshot of its rows for free.
 */
import { resolve } from "node:path";
import { foldCase } from "../identifiers.ts";
import { formatPath, isRecord, type Problems } from "./problems.ts";
import { DEFAULTS } from "./schema.ts";
import type { Config, DashboardEntry } from "./types.ts";

/** Slugs that would collide with the server's own routes (the API, health checks and metrics). */
const RESERVED_SLUGS = new Set(["api", "mcp", "healthz", "readyz", "metrics"]);

/** `schemaSold`: the configured tables with a metadata_price tag. */
export function resolveDashboards(raw: unknown, tableNames: string[], baseDir: string, problems: Problems, schemaSold: string[] = []): Config["dashboards"] {
  const section = isRecord(raw) ? raw : {};
  const root = resolve(baseDir, typeof section.root === "string" ? section.root : DEFAULTS.dashboardsRoot);
  const tablesByFoldedName = new Map(tableNames.map((name) => [foldCase(name), name]));
  const firstIndexBySlug = new Map<string, number>();
  const entries = (Array.isArray(section.entries) ? section.entries : []).map((item: unknown, index): DashboardEntry => {
    const entry = isRecord(item) ? item : {};
    const path = ["dashboards", "entries", index];
    const slug = typeof entry.slug === "string" ? entry.slug : "";
    if (RESERVED_SLUGS.has(slug)) {
      problems.add([...path, "slug"], `${slug} is reserved for the server's own routes; choose another slug`);
    } else if (slug !== "") {
      const earlier = firstIndexBySlug.get(slug);
      if (earlier === undefined) firstIndexBySlug.set(slug, index);
      else problems.add([...path, "slug"], `${slug} is already used by ${formatPath(["dashboards", "entries", earlier])}; slugs must be unique`);
    }
    let table = typeof entry.table === "string" ? entry.table : "";
    if (table !== "") {
      const configured = tablesByFoldedName.get(foldCase(table));
      if (configured === undefined) {
        problems.add([...path, "table"], `${JSON.stringify(table)} is not a configured table; use one of ${tableNames.join(", ")}`);
      } else if (schemaSold.includes(configured)) {
        problems.add(
          [...path, "table"],
          `${JSON.stringify(configured)} sells its schema (a metadata_price price tag), which a dashboard would publish for free (its columns, their types and a snapshot of its rows): remove this entry, or the table's metadata_price tag`,
        );
      } else {
        table = configured;
      }
    }
    return {
      slug,
      title: typeof entry.title === "string" ? entry.title : "",
      description: typeof entry.description === "string" ? entry.description : "",
      tags: Array.isArray(entry.tags) ? entry.tags.filter((tag): tag is string => typeof tag === "string") : [],
      table,
      enabled: entry.enabled !== false,
    };
  });
  return { root, entries };
}
