/**
 * A query the dialect accepts that keeps SQLite busy for seconds without building large strings:
 * a long strftime() format is rendered for every row (~7 µs per 100 characters per row), so a
 * table of a few hundred thousand rows takes seconds. `salt` makes each text distinct.
 */
export function slowQuery(salt: number, table = "big"): string {
  return `SELECT id FROM ${table} WHERE length(strftime('${"%Y-%m-%dT%H:%M:%f".repeat(100)}', id)) < ${-salt}`;
}
