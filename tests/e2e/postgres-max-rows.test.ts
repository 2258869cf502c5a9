/**
 * max_rows on PostgreSQL tables (DESIGN.md §14, ARCHITECTURE.md §9): a streamed result over the
 * limit is a 400 with its exact row count before any byte, whichever way the engine learns the
 * count — a result that fits a response's first part read whole as one statement, a table's
 * integer key bounding the rows (max − min + 1) so no count is needed, or a count in the read's
 * snapshot when neither tells. Through the real listening server and a real PostgreSQL server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { tableFromIPC } from "apache-arrow";
import { resolveConfig } from "../../src/config/load.ts";
import { FIRST_RESPONSE_ROWS } from "../../src/results/batches.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir } from "../support/fixtures.ts";
import { usePostgres } from "../support/postgres.ts";

const pg = usePostgres();
/** max_rows 40,000: more than a response's first part (32,768 rows), so every way is taken. */
let wide: RunningServer;
/** max_rows 50: a result read whole can be over it. */
let narrow: RunningServer;
let admin: SQL;

const MAX = 40_000;

beforeAll(async () => {
  expect(FIRST_RESPONSE_ROWS).toBeLessThan(35_000);
  admin = new SQL(pg.url);
  await admin.unsafe(`
    CREATE TABLE keyed (id int8 PRIMARY KEY, n int4 NOT NULL);
    INSERT INTO keyed SELECT g, g FROM generate_series(1, 35000) g;
    CREATE TABLE gapped (id int4 PRIMARY KEY, n int4 NOT NULL);
    INSERT INTO gapped SELECT 2 * g, g FROM generate_series(1, 35000) g;
    CREATE TABLE keyed_over (id int8 PRIMARY KEY, n int4 NOT NULL);
    INSERT INTO keyed_over SELECT g, g FROM generate_series(1, 45000) g;
    CREATE TABLE plain (n int4, note text);
    INSERT INTO plain SELECT g, md5(g::text) FROM generate_series(1, 45000) g;
    CREATE TABLE empty_keyed (id int8 PRIMARY KEY);
  `);
  const start = (maxRows: number) => {
    const config = resolveConfig(
      {
        server: { bind: "127.0.0.1:0" },
        databases: { warehouse: { postgres: pg.url } },
        limits: { max_rows: maxRows },
        tables: ["keyed", "gapped", "keyed_over", "plain", "empty_keyed"].map((name) => ({ name })),
      },
      { baseDir: tempDir(), env: {} },
    );
    return startServer(config, { workers: 1 });
  };
  wide = await start(MAX);
  narrow = await start(50);
}, 60_000);

afterAll(async () => {
  await wide?.stop();
  await narrow?.stop();
  await admin?.close();
});

const get = (server: RunningServer, sql: string, accept = "application/vnd.apache.arrow.stream") =>
  fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { accept, "accept-encoding": "identity" } });

async function rowsOf(response: Response): Promise<number> {
  expect(response.status).toBe(200);
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/csv")) return (await response.text()).trimEnd().split("\n").length - 1;
  return tableFromIPC(new Uint8Array(await response.arrayBuffer())).numRows;
}

describe("within max_rows: every row", () => {
  test.each([
    ["read whole (10 rows of a 45,000-row table without a key)", "SELECT n, note FROM plain WHERE n <= 10", 10],
    ["a table's key bounds it (ids 1..35,000)", "SELECT id, n FROM keyed", 35_000],
    ["the key's span is over the limit (ids 2..70,000): counted", "SELECT id, n FROM gapped", 35_000],
    ["no key: counted", "SELECT n, note FROM plain WHERE n <= 35000", 35_000],
    ["an empty keyed table", "SELECT id FROM empty_keyed", 0],
  ])("%s", async (_, sql, rows) => {
    expect(await rowsOf(await get(wide, sql))).toBe(rows);
    expect(await rowsOf(await get(wide, sql, "text/csv"))).toBe(rows);
  });
});

describe("over max_rows: a 400 with the exact count, before any byte", () => {
  test.each([
    ["wide", "the key's span (45,000) is over the limit: counted", "SELECT id, n FROM keyed_over", 45_000, MAX],
    ["wide", "no key: counted", "SELECT n, note FROM plain", 45_000, MAX],
    ["narrow", "read whole (51 rows)", "SELECT n FROM plain WHERE n <= 51", 51, 50],
    ["narrow", "read whole, every row of a small result over the limit (1,000 rows)", "SELECT id FROM keyed WHERE id <= 1000", 1_000, 50],
  ] as const)("max_rows %s, %s", async (which, _, sql, rows, max) => {
    for (const accept of ["application/vnd.apache.arrow.stream", "text/csv"]) {
      const response = await get(which === "wide" ? wide : narrow, sql, accept);
      expect(response.status).toBe(400);
      expect(await response.text()).toBe(`The result has ${rows} rows, more than the limit of ${max}: add a WHERE condition or a LIMIT of at most ${max}`);
    }
  });
});
