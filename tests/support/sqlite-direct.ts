/**
 * What SQLite itself returns for a query, read through a connection of its own (opened read-only
 * and closed again), to compare an answer of the server with.
 */
import { Database } from "bun:sqlite";

/** The rows of `sql` as arrays of values; integers as bigint with `safeIntegers`. */
export function sqliteValues(path: string, sql: string, options: { safeIntegers?: boolean } = {}): unknown[][] {
  const db = new Database(path, { readonly: true, safeIntegers: options.safeIntegers ?? false });
  try {
    return db.query(sql).values();
  } finally {
    db.close();
  }
}
