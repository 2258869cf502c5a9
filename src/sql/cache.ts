/**
 * Validated queries by their text. Parsing is most of the cost of a small query (sql-parser-cst
 * takes ~0.5 ms for a short SELECT), and agents repeat the same queries; the catalog is fixed for
 * the life of the process, so a validated text stays valid. Bounded, least recently used first out.
 */
import type { Catalog } from "../db/catalog.ts";
import { validateQuery, type ValidatedQuery } from "./dialect.ts";

export type QueryValidator = (sql: string) => ValidatedQuery;

export function cachedValidator(catalog: Catalog, limits: { maxQueryBytes: number }, capacity = 1024): QueryValidator {
  const cache = new Map<string, ValidatedQuery>();
  return (sql) => {
    const hit = cache.get(sql);
    if (hit !== undefined) {
      // Map keeps insertion order: re-inserting marks it most recently used.
      cache.delete(sql);
      cache.set(sql, hit);
      return hit;
    }
    // Rejections are not cached: they throw before reaching here.
    const validated = validateQuery(sql, catalog, limits);
    cache.set(sql, validated);
    if (cache.size > capacity) cache.delete(cache.keys().next().value!);
    return validated;
  };
}
