/**
 * Exports that scan a whole table, filtered or not, read by two workers range by range
 * (engines/sqlite/striped.ts), against a real `arrow402 serve` process: the body holds the rows and order of
 * one SQLite scan in Arrow and in CSV, `arrow402_split_scans_total` counts the split, a table
 * whose rowids leave ranges empty is exported to the end, and a small query during a costly export
 * gets a fresh worker while the export's second worker finishes its ranges.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import type { ChildServer } from "../../bench/processes.ts";
import { tempDir } from "../support/fixtures.ts";
import { sqliteValues } from "../support/sqlite-direct.ts";
import { metricValue } from "../ops/support.ts";
import { serveConfig } from "../support/spawned-server.ts";

let server: ChildServer;
let dbPath: string;

beforeAll(async () => {
  const dir = tempDir();
  dbPath = join(dir, "split.sqlite");
  const db = new Database(dbPath);
  db.run("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT, price REAL)");
  db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
          INSERT INTO items SELECT x, 'item ' || x, (x % 1000) / 10.0 FROM c`);
  // Two runs of rows 60,000 rowids apart: the ranges between them hold nothing.
  db.run("CREATE TABLE gappy (id INTEGER PRIMARY KEY, label TEXT)");
  db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000)
          INSERT INTO gappy SELECT x, 'g' || x FROM c UNION ALL SELECT x + 65000, 'g' || (x + 65000) FROM c`);
  db.close();
  // The costly export takes several seconds on two loaded cores: a time limit it cannot reach there.
  const config = {
    server: { metrics: true },
    database: { sqlite: "./split.sqlite" },
    limits: { query_timeout_ms: 120_000 },
    tables: [{ name: "items" }, { name: "gappy" }],
  };
  server = await serveConfig(dir, config);
  // Both workers started: on a loaded machine a helper still starting joins an export too late to
  // split it. Each try reads the whole table once.
  for (let tries = 0; tries < 20 && (await splitScans()) === 0; tries++) await (await get("SELECT * FROM items")).arrayBuffer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const splitScans = () => metricValue(server.url, "arrow402_split_scans_total");
const substituted = () => metricValue(server.url, "arrow402_split_helpers_substituted_total");

async function get(sql: string, format = "arrow"): Promise<Response> {
  const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}&format=${format}`, { headers: { "accept-encoding": "identity" } });
  // A refusal says why.
  if (response.status !== 200) expect({ sql, status: response.status, text: await response.text() }).toEqual({ sql, status: 200, text: "" });
  return response;
}

test("a filtered export is read by two workers and holds the rows and order of one scan", async () => {
  const sql = "SELECT id, label, price FROM items WHERE price >= 50 OR label LIKE '%7'";
  const before = await splitScans();
  const table = tableFromIPC(new Uint8Array(await (await get(sql)).arrayBuffer()));
  expect(await splitScans()).toBe(before + 1);
  const expected = sqliteValues(dbPath, sql);
  expect(table.numRows).toBe(expected.length);
  expect(table.toArray().map((row) => [row.id, row.label, row.price])).toEqual(expected.map(([id, label, price]) => [BigInt(id as number), label, price]));
}, 30_000);

test("the same filtered export in CSV: one header, then each row of the scan in order", async () => {
  const sql = "SELECT id, label FROM items WHERE id % 7 = 3";
  // RFC 4180 line ends.
  const lines = (await (await get(sql, "csv")).text()).trimEnd().split("\r\n");
  expect(lines[0]).toBe("id,label");
  expect(lines.slice(1)).toEqual(sqliteValues(dbPath, sql).map(([id, label]) => `${id},${label}`));
}, 30_000);

test("a whole-table export whose rowids leave ranges empty is sent to the end", async () => {
  const table = tableFromIPC(new Uint8Array(await (await get("SELECT id, label FROM gappy")).arrayBuffer()));
  expect(table.numRows).toBe(10_000);
  expect(table.getChild("id")!.toArray().at(-1)).toBe(70_000n);
}, 30_000);

test("a small query during a costly filtered export: a fresh worker answers it, the export's second worker finishes its ranges, the export is whole", async () => {
  // 300 LIKEs per row (in groups of 50: the dialect refuses expressions nested 64 deep): a range of
  // 4,096 rows takes ~60 ms, so the second worker holds two ranges far longer than 25 ms.
  const group = (g: number) => `(${Array.from({ length: 50 }, (_, i) => `label LIKE '%i%t%${g * 50 + i}%x%'`).join(" OR ")})`;
  const sql = `SELECT id, label FROM items WHERE ${Array.from({ length: 6 }, (_, g) => group(g)).join(" OR ")} OR price >= 0`;
  const smallSql = "SELECT id FROM items WHERE label LIKE '%9' LIMIT 5000";
  const before = { split: await splitScans(), substituted: await substituted() };
  let exportDone = false;
  const exported = get(sql).then(async (response) => {
    const bytes = new Uint8Array(await response.arrayBuffer());
    exportDone = true;
    return bytes;
  });
  for (let i = 0; i < 1_000 && (await splitScans()) === before.split; i++) await Bun.sleep(5);
  expect(await splitScans()).toBe(before.split + 1);
  const small = tableFromIPC(new Uint8Array(await (await get(smallSql)).arrayBuffer()));
  expect({ answeredDuringExport: !exportDone, substituted: (await substituted()) - before.substituted }).toEqual({ answeredDuringExport: true, substituted: 1 });
  expect(small.toArray().map((row) => [Number(row.id)])).toEqual(sqliteValues(dbPath, smallSql) as number[][]);
  const table = tableFromIPC(await exported);
  expect(table.numRows).toBe(100_000);
  expect(table.toArray().map((row) => [Number(row.id), row.label])).toEqual(sqliteValues(dbPath, sql));
}, 120_000);
