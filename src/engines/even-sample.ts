/**
 * Which rows an even sample keeps (TableEngine `sample`, ARCHITECTURE.md §7): `cap` positions spread
 * evenly over the table's rows in the order sampled along, the first and the last included, so a
 * sample along a time column covers the table's whole time range. Each engine keeps the same
 * positions (SQLite from this list, PostgreSQL with the same arithmetic in SQL).
 */

/** 1-based positions of `cap` rows spread evenly over `total`, the first and the last included. */
export function evenPositions(total: number, cap: number): number[] {
  if (cap >= total) return Array.from({ length: total }, (_, i) => i + 1);
  if (cap <= 1) return cap === 1 ? [total] : [];
  return Array.from({ length: cap }, (_, i) => Math.round((i * (total - 1)) / (cap - 1)) + 1);
}
