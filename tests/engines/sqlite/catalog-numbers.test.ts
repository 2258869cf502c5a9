/**
 * Which columns SQLite keeps to numbers (catalog.ts `numbersOnly`): only those may be named more
 * than LIMITS.maxColumnNames times in a select list (sql/dialect.ts). SQLite stores text in a
 * column of any declared type unless the table is STRICT; the rowid alias is always an integer.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { resolveConfig } from "../../../src/config/load.ts";
import { openReadOnly, readCatalog } from "../../../src/engines/sqlite/catalog.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";

test("the rowid alias and a STRICT table's INT, INTEGER and REAL columns hold only numbers; nothing else does", () => {
  const dir = tempDir();
  const file = join(dir, "numbers.sqlite");
  const db = new Database(file, { create: true });
  db.run("CREATE TABLE loose (id INTEGER PRIMARY KEY, n INTEGER, r REAL, t TEXT)");
  db.run("CREATE TABLE strict_one (id INTEGER PRIMARY KEY, n INT, r REAL, a ANY, t TEXT) STRICT");
  db.run("CREATE TABLE keyed (code INTEGER, n INTEGER, PRIMARY KEY (code, n)) STRICT");
  db.run("CREATE TABLE no_rowid (id INTEGER PRIMARY KEY, t TEXT) WITHOUT ROWID");
  // What the flag guards against: an INTEGER column of a table that is not STRICT takes text.
  db.run("INSERT INTO loose VALUES (1, 'a long text', 'more', 'x')");
  db.close();
  const tables = ["loose", "strict_one", "keyed", "no_rowid"];
  const config = resolveConfig({ database: { sqlite: file }, ledger: { path: join(dir, "l.sqlite") }, tables: tables.map((name) => ({ name })) }, { baseDir: dir, env: {} });
  const reader = openReadOnly(file);
  const { catalog } = readCatalog(reader, config.tables);
  reader.close();
  const numbersOnly = Object.fromEntries(catalog.tables.map((t) => [t.name, t.columns.filter((c) => c.numbersOnly).map((c) => c.name)]));
  expect(numbersOnly).toEqual({ loose: ["id"], strict_one: ["id", "n", "r"], keyed: ["code", "n"], no_rowid: [] });
  // Through the dialect: named six times, only those columns are accepted.
  const sixTimes = (table: string, column: string) => `SELECT ${Array.from({ length: 6 }, (_, i) => `${column} AS c${i}`).join(", ")} FROM ${table}`;
  expect(() => validateQuery(sixTimes("strict_one", "r"), catalog, { maxQueryBytes: 10_000 })).not.toThrow();
  expect(() => validateQuery(sixTimes("loose", "n"), catalog, { maxQueryBytes: 10_000 })).toThrow(/named more than 4 times/);
  expect(() => validateQuery(sixTimes("strict_one", "a"), catalog, { maxQueryBytes: 10_000 })).toThrow(/named more than 4 times/);
});
