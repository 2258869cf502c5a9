/**
 * What in a WHERE can fail on a value (src/sql/data-failures.ts, DESIGN.md §17): each expression
 * below is validated, and then run by SQLite over rows that hold the values that make functions
 * fail (-2^63 in every column that keeps it, 60,000-byte texts). An expression passed as safe must
 * never fail there; one flagged, where marked, does fail, so the flag is not a guess.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openReadOnly, readCatalog, type Catalog } from "../../src/engines/sqlite/catalog.ts";
import { validateQuery } from "../../src/sql/dialect.ts";

let dir: string;
let db: Database;
let catalog: Catalog;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "arrow402-data-failures-"));
  const path = join(dir, "traps.sqlite");
  const writer = new Database(path, { create: true });
  writer.run("CREATE TABLE traps (i INTEGER, r REAL, s TEXT, v VARCHAR(9), n NUMERIC, b BLOB, x, d DATE)");
  const smallest = -(2n ** 63n);
  const insert = writer.prepare("INSERT INTO traps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  insert.run(smallest, smallest, smallest, smallest, smallest, smallest, smallest, smallest);
  insert.run(smallest + 1n, smallest + 1n, smallest + 1n, smallest + 1n, smallest + 1n, smallest + 1n, smallest + 1n, smallest + 1n);
  const long = "%".repeat(60_000);
  insert.run(1, 1.5, long, long, long, long, long, long);
  insert.run(2, 2.5, "abc", "abc", "12", "abc", "abc", "2024-01-02");
  writer.close();
  db = openReadOnly(path);
  catalog = readCatalog(db, [{ name: "traps", database: "main", source: "traps", description: "", columns: {}, priceTags: [] }]).catalog;
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const where = (expr: string) => `SELECT i FROM traps WHERE ${expr}`;
const flagOf = (expr: string) => validateQuery(where(expr), catalog, { maxQueryBytes: 1 << 20 }).failsOnData;
const sqliteFails = (expr: string) => {
  try {
    db.query(`SELECT count(*) FROM traps WHERE ${expr}`).all();
    return false;
  } catch {
    return true;
  }
};

describe("passed as safe: SQLite never fails on them", () => {
  test.each([
    "abs(r) > 0",
    "abs(s) > 0",
    "abs(v) > 0",
    "abs(CAST(i AS REAL)) > 0",
    "abs(CAST(x AS TEXT)) >= 0",
    "abs(-i) > 0",
    "abs(-x) > 0",
    "abs(length(x)) > 0",
    "abs(round(i)) > 0",
    "abs(coalesce(r, s)) > 0",
    "abs(-9223372036854775807) > 0",
    "abs(-9223372036854775808.0) > 0",
    "abs(0x7FFFFFFFFFFFFFFF) > 0",
    "abs(i = 1) >= 0",
    "s LIKE 'ab%'",
    "s GLOB '*b*' AND s NOT LIKE '%z' ESCAPE '!'",
    "i + 1 > 0 AND r * 2 < 0 AND -i < 0",
  ])("%s", (expr) => {
    expect(flagOf(expr)).toBeNull();
    expect(sqliteFails(expr)).toBe(false);
  });
});

describe("flagged: the sentence names the construct and what to write instead", () => {
  test.each([
    ["abs(i) > 0", /abs\(i\) fails when a value is -9223372036854775808.*abs\(CAST\(i AS REAL\)\)/, true],
    ["abs(n) > 0", /abs\(n\)/, true],
    ["abs(x) > 0", /abs\(x\)/, true],
    ["abs(d) > 0", /abs\(d\)/, true],
    ["abs(b) > 0", /abs\(b\)/, true],
    ["abs(+i) > 0", /abs\(\+i\)/, true],
    ["abs(i - 1) > 0", /abs\(i - 1\)/, true],
    ["abs(CAST(s AS INTEGER)) > 0", /abs\(CAST\(s AS INTEGER\)\)/, true],
    ["abs(coalesce(r, i)) > 0", /abs\(coalesce\(r, i\)\)/, false],
    ["abs(-9223372036854775808) > 0", /abs\(-9223372036854775808\)/, true],
    ["abs(-(9223372036854775808)) > 0", /abs\(-\(9223372036854775808\)\)/, true],
    ["abs(0x8000000000000000) > 0", /abs\(0x8000000000000000\)/, true],
    ["abs(-0x8000000000000000) > 0", /abs\(-0x8000000000000000\)/, true],
    ["'a' LIKE s", /LIKE pattern 's' is read from the table/, true],
    ["'a' NOT LIKE v ESCAPE '!'", /LIKE pattern 'v' is read from the table/, true],
    ["'a' GLOB '*' || x", /GLOB pattern ''\*' \|\| x' is read from the table/, true],
    ["'a' LIKE lower(b)", /LIKE pattern 'lower\(b\)'/, false],
  ] as const)("%s", (expr, message, fails) => {
    expect(flagOf(expr)).toMatch(message);
    if (fails) expect(sqliteFails(expr)).toBe(true);
  });
});
