/**
 * What a table's price tags say about how its queries are sold, in one place (ARCHITECTURE.md §3,
 * DESIGN.md §17). Every part that asks "are queries paid?" or "does a quote tell the data's
 * count?" asks here.
 */
import type { PriceTag } from "../config/types.ts";

/** Querying needs payment: the table has a per_row or fixed tag (metadata_price sells only the schema). */
export function queriesArePaid(tags: readonly PriceTag[]): boolean {
  return tags.some((tag) => tag.type !== "metadata_price");
}

/** A per_row tag prices queries by the rows they return, so its quote counts them first and tells the count. */
export function quotesCountRows(tags: readonly PriceTag[]): boolean {
  return tags.some((tag) => tag.type === "per_row" && tag.quote === "count");
}

/**
 * Queries are paid and nothing about the data is told before payment: fixed prices, and per_row
 * prices quoted by the query's LIMIT. On such a table a failure after payment must not tell what a
 * quote does not (DESIGN.md §17 "A paid failure is not an oracle"): every query carries a LIMIT
 * within max_rows, constructs that can fail on a value are refused before payment, and a failure
 * after /verify gets one answer.
 */
export function quotesRevealNothing(tags: readonly PriceTag[]): boolean {
  return queriesArePaid(tags) && !quotesCountRows(tags);
}
