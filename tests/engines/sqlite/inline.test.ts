/**
 * Inline reads (src/engines/sqlite/inline.ts): only provably small queries run on the HTTP thread, and they
 * give exactly what SQLite holds; a value that does not fit sends the query back to the workers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { INLINE_MAX_BYTES, InlineReader } from "../../../src/engines/sqlite/inline.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { validateQuery, type ValidatedQuery } from "../../../src/sql/dialect.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../../support/fixtures.ts";
import { sqliteValues } from "../../support/sqlite-direct.ts";

let reader: InlineReader;
let validate: (sql: string) => ValidatedQuery;
let path: string;

beforeAll(() => {
  const dir = tempDir();
  path = join(dir, "types.sqlite");
  createTypesDatabase(path);
  const db = new Database(path);
  db.run("CREATE TABLE broken (id INTEGER PRIMARY KEY, n INTEGER)");
  db.run("INSERT INTO broken VALUES (1, 10), (2, 'ten')");
  db.run("CREATE VIEW item_names AS SELECT id, name AS title FROM items");
  db.run("CREATE VIEW named_kinds AS SELECT * FROM kinds");
  db.run("CREATE VIEW view_of_view AS SELECT id FROM item_names");
  // Too many rows to count within the inline budget.
  db.run("CREATE TABLE big (id INTEGER PRIMARY KEY, n INTEGER)");
  db.run("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300000) INSERT INTO big SELECT i, i % 997 FROM s");
  // Few rows, large values: 20 × 20 KB of text, 20 × 20 KB of blobs.
  db.run("CREATE TABLE wide (id INTEGER PRIMARY KEY, body TEXT, data BLOB)");
  db.run("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20) INSERT INTO wide SELECT i, printf('%.*c', 20000, 'x'), zeroblob(20000) FROM s");
  db.close();
  const tables = ["kinds", "items", "cheap_items", "broken", "item_names", "named_kinds", "view_of_view", "big", "wide"];
  const config = typesConfig(dir, { tables: tables.map((name) => ({ name, description: name })) });
  const catalogDb = openReadOnly(path);
  const catalog: Catalog = readCatalog(catalogDb, config.tables).catalog;
  catalogDb.close();
  validate = (sql) => validateQuery(sql, catalog, { maxQueryBytes: 16384 });
  reader = new InlineReader(path, 500);
});
afterAll(() => reader.close());

describe("eligible: bounded reads of a table (or a view picking its columns), nothing else", () => {
  test.each([
    ["SELECT * FROM items LIMIT 10", true],
    ["SELECT id, name FROM items LIMIT 500", true],
    ["SELECT id FROM items LIMIT 400 OFFSET 600", true],
    ["SELECT id FROM items LIMIT 400 OFFSET 601", false], // reads more than 1000 rows
    ["SELECT id FROM items LIMIT 501", false], // over max_rows: the workers refuse it
    ["SELECT id FROM items", false], // unbounded
    ["SELECT id FROM items WHERE price > 1 LIMIT 10", false], // a filter may scan the table
    ["SELECT id FROM items ORDER BY price LIMIT 10", false], // a sort reads every row
    ["SELECT id FROM cheap_items LIMIT 10", false], // a view with a filter may scan the table
    ["SELECT title FROM item_names LIMIT 10", true], // a view that only picks columns reads what a table does
    ["SELECT * FROM named_kinds LIMIT 2", true],
    ["SELECT id FROM view_of_view LIMIT 10", false], // the inner view's shape is not checked
    // At most 64,000 values: a column named 200 times under aliases is 200 columns.
    [`SELECT ${Array.from({ length: 200 }, (_, i) => `id AS c${i}`).join(", ")} FROM items LIMIT 320`, true],
    [`SELECT ${Array.from({ length: 200 }, (_, i) => `id AS c${i}`).join(", ")} FROM items LIMIT 321`, false],
  ])("%s → %p", (sql, eligible) => {
    expect(reader.eligible(validate(sql))).toBe(eligible);
  });
});

test("an inline read is exactly what SQLite holds", () => {
  const result = reader.read(validate("SELECT id, big, label, day, at FROM kinds LIMIT 3 OFFSET 1"))!;
  expect(result.rows).toBe(3);
  const table = tableFromIPC(result.chunks);
  const direct = sqliteValues(path, "SELECT id, big, label FROM kinds LIMIT 3 OFFSET 1", { safeIntegers: true });
  expect(table.toArray().map((r) => [r.id, r.big, r.label])).toEqual(direct);
  expect(table.schema.fields.map((f) => String(f.type))).toEqual(["Int64", "Int64", "Utf8", "Date32<DAY>", "Timestamp<MILLISECOND, UTC>"]);
});

test("an inline read of a column-picking view is exactly what SQLite holds", () => {
  const result = reader.read(validate("SELECT title, id FROM item_names LIMIT 5 OFFSET 3"))!;
  const direct = sqliteValues(path, "SELECT title, id FROM item_names LIMIT 5 OFFSET 3", { safeIntegers: true });
  expect(tableFromIPC(result.chunks).toArray().map((r) => [r.title, r.id])).toEqual(direct);
});

test("a WHERE that does much work per row is never tried here: one row could outlast any budget", () => {
  // Two 3,000-byte strings searched in each other: ~9 MB compared per row, within the dialect's limit.
  const query = validate(`SELECT id FROM big WHERE instr('${"x".repeat(3000)}' || n, '${"x".repeat(3000)}') > 0 LIMIT 5`);
  expect(query.cheapPerRow).toBe(false);
  const before = reader.stats.budgetedRuns;
  expect(reader.read(query)).toBeNull();
  expect(reader.count(query)).toBeNull();
  expect(reader.stats.budgetedRuns).toBe(before);
  // The same search with short strings is tried (and answered) here.
  expect(reader.read(validate("SELECT id FROM big WHERE instr('xx' || n, 'x1') > 0 LIMIT 5"))!.rows).toBe(5);
  expect(reader.stats.budgetedRuns).toBe(before + 1);
});

test("a value that does not fit is left to the workers, which name its rowid", () => {
  expect(reader.read(validate("SELECT * FROM broken LIMIT 5"))).toBeNull();
});

test("a query whose count overran its budget is read by a worker without trying here again", () => {
  // A per_row quote counts first; the paid read that follows examines at least the same rows.
  const query = validate("SELECT id, n FROM big WHERE n >= 0");
  const before = { ...reader.stats };
  expect(reader.count(query)).toBeNull();
  expect(reader.stats).toEqual({ budgetedRuns: before.budgetedRuns + 1, overruns: before.overruns + 1 });
  expect(reader.read(query)).toBeNull();
  expect(reader.count(query)).toBeNull();
  // The read was not tried; the count is tried again (an overrun may come from a pause of this thread).
  expect(reader.stats).toEqual({ budgetedRuns: before.budgetedRuns + 2, overruns: before.overruns + 2 });
  // Another query (text) of the same table is still tried.
  expect(reader.read(validate("SELECT id, n FROM big WHERE id <= 3 AND n >= 0"))!.rows).toBe(3);
  expect(reader.stats.budgetedRuns).toBe(before.budgetedRuns + 3);
});

describe("a LIMIT bounds the rows, not their size: rows holding more than INLINE_MAX_BYTES go to a worker", () => {
  test.each([
    ["SELECT * FROM wide LIMIT 20"], // ~800 KB of text and blobs
    ["SELECT body FROM wide WHERE id > 0 LIMIT 20"], // ~400 KB of text
    ["SELECT data FROM wide WHERE id > 0 LIMIT 20"], // ~400 KB of blobs
  ])("%s", (sql) => {
    const query = validate(sql);
    expect(reader.worthTrying(query)).toBe(true);
    expect(reader.read(query)).toBeNull();
    // Known too large from then on: not read here again, nor run early as a small query.
    expect(reader.worthTrying(query)).toBe(false);
    expect(reader.eligible(query)).toBe(false);
  });

  test("columns keep their order whatever their names, integer-like ones included", () => {
    const read = reader.read(validate('SELECT id AS "1", body AS "b", data AS "0" FROM wide WHERE id <= 2 LIMIT 2'));
    expect(read?.rows).toBe(2);
    const table = tableFromIPC(read!.chunks[0]!);
    expect(table.schema.fields.map((field) => field.name)).toEqual(["1", "b", "0"]);
    expect(table.toArray().map((row) => [Number(row["1"]), (row.b as string).length, (row["0"] as Uint8Array).byteLength])).toEqual([
      [1, 20_000, 20_000],
      [2, 20_000, 20_000],
    ]);
  });

  test("within it, the same rows are read here", () => {
    const read = reader.read(validate("SELECT id, body FROM wide LIMIT 10"));
    expect(read?.rows).toBe(10);
    expect(10 * 20_000).toBeLessThan(INLINE_MAX_BYTES);
    const table = tableFromIPC(read!.chunks[0]!);
    expect(table.getChild("body")!.get(9)).toBe("x".repeat(20_000));
  });
});
