/**
 * The max_rows refusal stays exact however the row count is learnt (ARCHITECTURE.md §2 `limits`):
 * counted first for a streamed result unless the table's rowid span already bounds it, found by
 * the scan for a buffered (paid) result, and in every refusal the exact count is named.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { SqliteExecutor } from "./executor.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";
import { resolveConfig } from "../../../src/config/load.ts";

const MAX_ROWS = 100;
let executor: SqliteExecutor;
let catalog: Catalog;

beforeAll(() => {
  const dir = tempDir();
  const path = join(dir, "limits.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE dense (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE sparse (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE many (id INTEGER PRIMARY KEY, v TEXT)");
  db.run("CREATE TABLE shadowed (rowid INTEGER, _rowid_ INTEGER, oid INTEGER)");
  db.run("CREATE TABLE empty (id INTEGER PRIMARY KEY)");
  db.run("CREATE VIEW many_view AS SELECT * FROM many");
  // 40 rows of 10,000 characters; row 35's n is text in an INTEGER column, which no format accepts.
  db.run("CREATE TABLE wide (id INTEGER PRIMARY KEY, n INTEGER, v TEXT)");
  db.transaction(() => {
    // Exactly max_rows rows, rowids 1..100: the span proves the limit holds.
    for (let i = 1; i <= MAX_ROWS; i++) db.run("INSERT INTO dense VALUES (?, ?)", [i, `d${i}`]);
    // 60 rows spread over a span of 10,000: the span proves nothing, the count decides.
    for (let i = 0; i < 60; i++) db.run("INSERT INTO sparse VALUES (?, ?)", [i * 170 - 5_000, `s${i}`]);
    for (let i = 1; i <= 250; i++) db.run("INSERT INTO many VALUES (?, ?)", [i, `m${i}`]);
    for (let i = 1; i <= 150; i++) db.run("INSERT INTO shadowed VALUES (?, ?, ?)", [i, i, i]);
    for (let i = 1; i <= 40; i++) db.run("INSERT INTO wide VALUES (?, ?, ?)", [i, i === 35 ? "x" : i, "v".repeat(10_000)]);
  })();
  db.close();
  const config = resolveConfig(
    {
      database: { sqlite: path },
      ledger: { path: join(dir, "ledger.sqlite") },
      limits: { max_rows: MAX_ROWS },
      tables: ["dense", "sparse", "many", "shadowed", "empty", "many_view", "wide"].map((name) => ({ name })),
    },
    { baseDir: dir, env: {} },
  );
  const reader = openReadOnly(path);
  catalog = readCatalog(reader, config.tables).catalog;
  reader.close();
  executor = new SqliteExecutor(path, config.limits, 2);
});

afterAll(() => executor.close());

const validated = (sql: string) => validateQuery(sql, catalog, { maxQueryBytes: 10_000 });
const refusal = (rows: number) =>
  `The result has ${rows} rows, more than the limit of ${MAX_ROWS}: add a WHERE condition or a LIMIT of at most ${MAX_ROWS}`;

async function streamedRows(sql: string): Promise<number> {
  const result = await executor.stream(validated(sql));
  const body = "complete" in result ? new Blob(result.complete as BlobPart[]) : result.body;
  return tableFromIPC(new Uint8Array(await new Response(body).arrayBuffer())).numRows;
}

describe("streamed results", () => {
  test.each([
    ["SELECT * FROM dense", MAX_ROWS],
    ["SELECT * FROM sparse", 60],
    ["SELECT * FROM sparse WHERE id > 0", 30],
    ["SELECT * FROM empty", 0],
    ["SELECT * FROM many WHERE id <= 100", 100],
    ["SELECT * FROM many_view WHERE id > 150", 100],
  ])("%s → %d rows", async (sql, rows) => {
    expect(await streamedRows(sql)).toBe(rows);
  });

  test.each([
    ["SELECT * FROM many", 250],
    ["SELECT * FROM many WHERE id <= 101", 101],
    ["SELECT * FROM many_view", 250],
    ["SELECT * FROM shadowed", 150],
  ])("%s is refused before streaming, naming %d rows", async (sql, rows) => {
    await expect(executor.stream(validated(sql))).rejects.toThrow(refusal(rows));
  });
});

describe("buffered results (paid queries)", () => {
  test("within the limit: every row, and the row count", async () => {
    const result = (await executor.collect(validated("SELECT * FROM many WHERE id > 150")))!;
    expect(result.rows).toBe(100);
    expect("complete" in result.result && tableFromIPC(result.result.complete).numRows).toBe(100);
  });

  test.each([
    ["SELECT * FROM many", 250],
    ["SELECT * FROM many_view WHERE id > 149", 101],
    ["SELECT * FROM shadowed", 150],
  ])("%s is refused with the exact count %d", async (sql, rows) => {
    await expect(executor.collect(validated(sql))).rejects.toThrow(refusal(rows));
  });
});

describe("a transport's byte cap (MCP: limits.mcp_max_bytes)", () => {
  test("the worker stops reading once the values pass it: rows past it are never read", async () => {
    // Uncapped, the read reaches row 35 and fails there.
    await expect(executor.collect(validated("SELECT * FROM wide"))).rejects.toThrow("rowid 35 does not fit");
    // Capped at ~10 rows' worth, it stops long before.
    expect(await executor.collect(validated("SELECT * FROM wide"), undefined, 100_000)).toBeNull();
    // The worker is free again: the next query is answered.
    expect((await executor.collect(validated("SELECT id FROM wide WHERE id <= 3")))!.rows).toBe(3);
  });
});
