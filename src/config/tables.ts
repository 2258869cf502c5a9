/**
 * The `tables:` section (ARCHITECTURE.md §2): the published tables, their descriptions and price tags.
 * Names are unique ignoring ASCII case, because SQLite resolves table and column names so
 * (identifiers.ts: "A" and "a" are one name, "É" and "é" two).
 * Whether each table exists in the database is checked later, against the database (`arrow402
 * validate`, server start), not here.
 */
import { foldCase } from "../identifiers.ts";
import type { ResolvedTokens } from "./custom-tokens.ts";
import { formatPath, isRecord, type Problems } from "./problems.ts";
import { resolvePriceTags } from "./price-tags.ts";
import type { TableConfig } from "./types.ts";

function resolveColumns(raw: unknown, tableIndex: number, problems: Problems): Record<string, string> {
  const columns: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (const [name, description] of Object.entries(isRecord(raw) ? raw : {})) {
    const earlier = seen.get(foldCase(name));
    if (earlier !== undefined) {
      problems.add(["tables", tableIndex, "columns", name], `describes the same column as ${earlier} (column names ignore case); keep one`);
    }
    seen.set(foldCase(name), name);
    if (typeof description === "string") columns[name] = description;
  }
  return columns;
}

export function resolveTables(raw: unknown, tokens: ResolvedTokens, problems: Problems): TableConfig[] {
  if (!Array.isArray(raw)) return [];
  const firstIndexByName = new Map<string, number>();
  return raw.map((entry, index): TableConfig => {
    const table = isRecord(entry) ? entry : {};
    const name = typeof table.name === "string" ? table.name : "";
    if (name !== "") {
      const earlier = firstIndexByName.get(foldCase(name));
      if (earlier === undefined) firstIndexByName.set(foldCase(name), index);
      else problems.add(["tables", index, "name"], `table ${JSON.stringify(name)} is already configured at ${formatPath(["tables", earlier])} (names ignore case); configure each table once`);
    }
    return {
      name,
      // Filled in by sources.ts `assignSources`, once the sources are known.
      database: "",
      source: name,
      description: typeof table.description === "string" ? table.description : "",
      columns: resolveColumns(table.columns, index, problems),
      priceTags: resolvePriceTags(table.price_tags, ["tables", index], tokens, problems),
    };
  });
}
