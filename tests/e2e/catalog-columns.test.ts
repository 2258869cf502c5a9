/**
 * The catalog's reading of keys and names (engines/sqlite/catalog.ts, identifiers.ts), through a real listening
 * server: a table keyed `INTEGER PRIMARY KEY DESC` (no rowid alias: its key holds any value, the
 * rowid is another column) exported in rowid order, with its key capped in the select
 * list like any text column, where `PRIMARY KEY(x DESC)` (an alias) is not; a WITHOUT ROWID table
 * with a comment between the two words; and the columns "É" and "é", two columns for SQLite, sorted
 * by in one ORDER BY.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { queryPath } from "../ops/support.ts";
import { tempDir } from "../support/fixtures.ts";
import { sqliteValues } from "../support/sqlite-direct.ts";

const ROWS = 100_000;
let server: RunningServer;
let dbPath: string;

beforeAll(async () => {
  const dir = tempDir();
  dbPath = join(dir, "keys.sqlite");
  const db = new Database(dbPath, { create: true });
  // Keys far from the rowids and in no order: 7919 is prime to 1,000,003, so every key is distinct.
  db.run("CREATE TABLE readings (n INTEGER PRIMARY KEY DESC, label TEXT)");
  db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
          INSERT INTO readings SELECT (x * 7919) % 1000003, 'r' || x FROM c`);
  db.run("CREATE TABLE aliased (n INTEGER, label TEXT, PRIMARY KEY (n DESC))");
  db.run("INSERT INTO aliased VALUES (5, 'five'), (3, 'three')");
  db.run("CREATE TABLE codes (code TEXT PRIMARY KEY, label TEXT) WITHOUT/* the words apart */ROWID");
  db.run("INSERT INTO codes VALUES ('b', 'bee'), ('a', 'ay')");
  db.run('CREATE TABLE accents ("É" TEXT, "é" TEXT)');
  db.run(`INSERT INTO accents VALUES ('b', 'x'), ('a', 'z'), ('b', 'y'), ('a', 'w')`);
  db.close();
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0", metrics: true },
      database: { sqlite: "keys.sqlite" },
      ledger: { path: "ledger.sqlite" },
      tables: [{ name: "readings" }, { name: "aliased" }, { name: "codes" }, { name: "accents" }],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config);
}, 60_000);
afterAll(() => server?.stop());

const get = (sql: string) => fetch(server.url + queryPath(sql), { headers: { "accept-encoding": "identity" } });

async function rows(sql: string): Promise<unknown[][]> {
  const response = await get(sql);
  expect(response.status).toBe(200);
  const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
  return table.toArray().map((row) => table.schema.fields.map((f) => row[f.name]));
}

test("a table keyed INTEGER PRIMARY KEY DESC is exported in SQLite's scan order, its keys as stored", async () => {
  const sql = "SELECT n, label FROM readings";
  const got = await rows(sql);
  expect(got).toHaveLength(ROWS);
  expect(got).toEqual(sqliteValues(dbPath, sql).map(([n, label]) => [BigInt(n as number), label]));
  // Rowid order, not key order: the keys are not the rowids.
  expect(got.slice(0, 3)).toEqual([[7919n, "r1"], [15838n, "r2"], [23757n, "r3"]]);
}, 60_000);

test.each([
  ["readings", "n INTEGER PRIMARY KEY DESC: no alias, it may hold text", 400],
  ["aliased", "PRIMARY KEY (n DESC) on an INTEGER n: the rowid alias", 200],
])("the key of %s named 5 times in the select list (%s): %d", async (table, _, status) => {
  const response = await get(`SELECT n, n AS a, n AS b, n AS c, n AS d FROM ${table} WHERE n = 5`);
  expect(response.status).toBe(status);
  if (status === 400) expect(await response.text()).toContain("Column 'n' is named more than 4 times in the select list");
  else expect(tableFromIPC(new Uint8Array(await response.arrayBuffer())).numRows).toBe(1);
});

test("a WITHOUT ROWID table whose CREATE has a comment between the words is queried as one without rowid", async () => {
  expect(await rows("SELECT code, label FROM codes")).toEqual([["a", "ay"], ["b", "bee"]]);
});

test('"É" and "é" are two columns: sorted by both, in one ORDER BY, as SQLite sorts', async () => {
  const sql = 'SELECT "é", "É" FROM accents ORDER BY "É" DESC, "é"';
  expect(await rows(sql)).toEqual(sqliteValues(dbPath, sql));
  expect(await rows(sql)).toEqual([["x", "b"], ["y", "b"], ["w", "a"], ["z", "a"]]);
});
