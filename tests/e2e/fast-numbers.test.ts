/**
 * Arrow exports read numbers without `safeIntegers` first (engines/sqlite/worker.ts `fastReader`),
 * against a real `arrow402 serve` process: a value a number cannot carry exactly, in any batch
 * (the first, a middle one, the last and partial one), sends the read on exactly from that batch,
 * so every value arrives exact and in order, and a value that does not fit is named as the exact
 * read names it. Cases are tables of their own, each with one such value at one row.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import type { ChildServer } from "../../bench/processes.ts";
import { tempDir } from "../support/fixtures.ts";
import { sqliteValues } from "../support/sqlite-direct.ts";
import { serveConfig } from "../support/spawned-server.ts";

const ROWS = 10_000;
const BIG = 2n ** 53n + 1n;

/** Each table: 10,000 rows of (id, n INTEGER, r REAL, t TEXT) with `value` in `n` at rowid `at` (none when null). */
const CASES = [
  { table: "plain", at: null, value: null },
  { table: "big_first", at: 3, value: BIG },
  { table: "big_middle", at: 5_000, value: -(2n ** 62n) - 3n },
  { table: "big_last", at: ROWS, value: BIG },
  { table: "real_in_integer", at: 9_000, value: 1.5 },
] as const;

let server: ChildServer;
let dbPath: string;

beforeAll(async () => {
  const dir = tempDir();
  dbPath = join(dir, "numbers.sqlite");
  const db = new Database(dbPath, { safeIntegers: true });
  for (const { table, at, value } of CASES) {
    db.run(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, n INTEGER, r REAL, t TEXT)`);
    db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
            INSERT INTO ${table} SELECT x, x * 3 - 7000, CASE WHEN x % 7 = 0 THEN NULL ELSE x / 8.0 END, 'row ' || x FROM c`);
    if (at !== null) db.query(`UPDATE ${table} SET n = ? WHERE id = ?`).run(value, at);
  }
  db.close();
  server = await serveConfig(dir, { database: { sqlite: "./numbers.sqlite" }, tables: CASES.map(({ table }) => ({ name: table })) });
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

async function get(sql: string): Promise<Response> {
  return fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { "accept-encoding": "identity" } });
}

test.each(CASES.filter((c) => typeof c.value !== "number"))("$table: every value exact, in the order of one scan", async ({ table }) => {
  const sql = `SELECT id, n, r, t FROM ${table}`;
  const response = await get(sql);
  expect(response.status).toBe(200);
  const answer = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
  expect(answer.numRows).toBe(ROWS);
  const exact = sqliteValues(dbPath, sql, { safeIntegers: true });
  expect(answer.toArray().map((row) => [row.id, row.n, row.r, row.t])).toEqual(exact);
}, 30_000);

test("a REAL in an INTEGER column is named as the exact read names it: table, column, rowid", async () => {
  const response = await get("SELECT id, n, r, t FROM real_in_integer");
  expect(response.status).toBe(500);
  expect(await response.text()).toContain("Value in table 'real_in_integer', column 'n', rowid 9000 does not fit its declared type");
}, 30_000);
