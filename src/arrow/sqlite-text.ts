/**
 * The text SQLite gives a number (what `CAST(x AS TEXT)` returns), so a number in a Utf8 column
 * reads the same through arrow402 as in the sqlite3 shell (ARCHITECTURE.md §5: "the value's text form").
 *
 * Integers print exactly. Reals are printed by SQLite itself: its algorithm (17 significant digits,
 * shortened when its own decimal conversion says the shorter text round-trips; "1.0e+20", "Inf")
 * differs from JavaScript's shortest round-trip form and has changed between SQLite versions, so
 * asking the SQLite library that stored the value is the only exact rule. A private in-memory
 * connection costs about a microsecond per value, and reals in text columns are rare (NUMERIC,
 * DECIMAL or untyped columns).
 */
import { Database, type Statement } from "bun:sqlite";

let realToText: Statement<unknown, [number]> | undefined;

/** SQLite's text for a REAL; null for NaN, which SQLite never stores (it becomes NULL). */
export function sqliteRealText(x: number): string | null {
  if (Number.isNaN(x)) return null;
  // bun:sqlite binds an integral number as INTEGER, so CAST it back to REAL before printing.
  realToText ??= new Database(":memory:").query("SELECT CAST(CAST(?1 AS REAL) AS TEXT)");
  const text = realToText.values(x)[0]?.[0];
  return typeof text === "string" ? text : null;
}

/** SQLite's text for an INTEGER: the decimal digits. */
export function sqliteIntegerText(x: number | bigint): string {
  return typeof x === "bigint" ? x.toString() : String(x);
}
