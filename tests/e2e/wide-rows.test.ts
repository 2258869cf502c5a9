/**
 * Exports of a table with wide rows (100 KB of text each), against a real `arrow402 serve` process:
 * batches end at BATCH_MAX_BYTES as well as BATCH_ROWS rows, the response starts after the first
 * few MB rather than after 32,768 rows, and such a table is read by one worker rather than split
 * into ranges of 4,096 rows (~400 MB each). Peak memory stays within the item-2 bound of twice the
 * payload; before, one 200 MB export held the whole result before its first byte (~4× the payload).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { residentBytes, resetPeakRss, spawnServer, type ChildServer } from "../../bench/processes.ts";
import { scrape } from "../ops/support.ts";
import { tempDir } from "../support/fixtures.ts";

const ROWS = 2_000;
const WIDTH = 100_000;
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
let server: ChildServer;

beforeAll(async () => {
  const dir = tempDir();
  const db = new Database(join(dir, "wide.sqlite"));
  db.run("CREATE TABLE documents (id INTEGER PRIMARY KEY, body TEXT)");
  db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
          INSERT INTO documents SELECT i, printf('%.${WIDTH}c', char(97 + i % 26)) FROM n`);
  db.close();
  const config = { server: { metrics: true }, database: { sqlite: "./wide.sqlite" }, tables: [{ name: "documents" }] };
  writeFileSync(join(dir, "arrow402.yaml"), Bun.YAML.stringify(config));
  server = await spawnServer(["bun", MAIN, "serve", "--config", join(dir, "arrow402.yaml"), "--bind", "127.0.0.1:0"], / on (http:\/\/\S+)/);
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

const splitScans = async () => (await scrape(server.url)).value("arrow402_split_scans_total", {}) ?? Number.NaN;

test.each([
  ["a whole-table export", "SELECT id, body FROM documents"],
  ["a rowid range", "SELECT id, body FROM documents WHERE id > 0"],
])("%s of 100 KB rows streams in bounded batches, within twice its payload", async (_, sql) => {
  const splits = await splitScans();
  const before = residentBytes(server.pid).rss;
  resetPeakRss(server.pid);
  const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { "accept-encoding": "identity" } });
  // Streamed: the response started before the result ended (a result read whole first has a length).
  expect(response.headers.get("content-length")).toBeNull();
  const body = new Uint8Array(await response.arrayBuffer());
  const growth = residentBytes(server.pid).peak - before;
  const table = tableFromIPC(body);
  expect(table.numRows).toBe(ROWS);
  expect(String(table.getChild("body")!.get(ROWS - 1)).length).toBe(WIDTH);
  // Many batches, each a few MB (4 MiB of values and one row at most).
  expect(table.batches.length).toBeGreaterThan(ROWS * WIDTH / (8 * 1024 * 1024));
  for (const batch of table.batches) expect(batch.numRows * WIDTH).toBeLessThanOrEqual(4 * 1024 * 1024 + WIDTH);
  expect(await splitScans()).toBe(splits);
  expect(growth).toBeLessThan(2 * body.byteLength);
}, 60_000);
