/**
 * A split scan's helper asked back for an interactive query and not back in time (engines/sqlite/striped.ts
 * `substituteHelper`): a fresh worker serves the interactive query, and the helper finishes the
 * ranges it holds, then leaves the pool. The export stays whole and in order even when the other
 * worker then reads a range of wide rows, sent in parts, ahead of the helper's ranges; nothing is
 * read twice; the pool is back to its size afterwards.
 *
 * The table is staged so each worker's ranges are known (stripe-plan.ts RANGE_ROWIDS = 4,096):
 *   range 0  500 slow rows, then quick ones: the first worker reads it while the helper joins;
 *   range 1  no rows (a gap): the first worker then holds ranges 1 and 4, the helper 2 and 3;
 *   2 and 3  slow rows: the helper is still reading range 2 when an interactive query asks it back;
 *   range 4  1,300 slow rows, then ~15 MB of wide rows between the rows the planner samples;
 *   5 to 9   quick, narrow rows.
 * "Slow" is a row the costly WHERE reads: `replace` nested 5 times (the most growth the dialect
 * allows) builds a 200 KB text from its 200 characters (~0.3 ms); other rows are let through by
 * the first, cheap, term of the OR.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { resolveConfig } from "../../../src/config/load.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import type { QueryResult } from "../../../src/results/executor.ts";
import { SqliteExecutor } from "./executor.ts";
import { BATCH_MAX_BYTES } from "../../../src/engines/sqlite/protocol.ts";
import { RANGE_ROWIDS } from "../../../src/engines/sqlite/stripe-plan.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";
import { sqliteValues } from "../../support/sqlite-direct.ts";

const ROWS = 10 * RANGE_ROWIDS;
const WORKERS = 2;
/** A time limit, and a test's time, that this test needs on a loaded machine only if it is stuck. */
const SLOW_MACHINE_MS = 120_000;
const rangeOf = (id: number) => Math.floor((id - 1) / RANGE_ROWIDS);
const inRange = (id: number) => id - rangeOf(id) * RANGE_ROWIDS;
/** 8,000 characters, well past what the planner's samples (every 2,560 rowids here) allow, and none of them a sampled row. */
const WIDE = 8_000;
const isWide = (id: number) => rangeOf(id) === 4 && inRange(id) > 2_100 && inRange(id) <= 4_000;
const isSlow = (id: number) => (rangeOf(id) === 0 && inRange(id) <= 500) || rangeOf(id) === 2 || rangeOf(id) === 3 || (rangeOf(id) === 4 && inRange(id) <= 1_300);

const grown = (depth: number): string => (depth === 0 ? "t" : `replace(${grown(depth - 1)}, 'a', 'aaaa')`);
const COSTLY = `kind = 'quick' OR length(${grown(5)}) > 0`;
const EXPORT_SQL = `SELECT id, kind, body FROM staged WHERE ${COSTLY}`;
/** An interactive query (a LIMIT): it overruns the HTTP thread's budget on slow rows and waits for a worker. */
const INTERACTIVE_SQL = `SELECT id FROM staged WHERE length(${grown(5)}) > 0 LIMIT 20`;

let path: string;
let catalog: Catalog;
let executor: SqliteExecutor;

beforeAll(async () => {
  const dir = tempDir();
  path = join(dir, "staged.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE staged (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, t TEXT NOT NULL, body TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO staged VALUES (?, ?, ?, ?)");
  db.transaction(() => {
    for (let id = 1; id <= ROWS; id++) {
      if (rangeOf(id) === 1) continue;
      const kind = isSlow(id) ? "slow" : "quick";
      insert.run(id, kind, "a".repeat(200), isWide(id) ? String.fromCharCode(97 + (id % 26)).repeat(WIDE) : `b${id}`);
    }
  })();
  db.close();
  const config = resolveConfig(
    // A time limit the costly export cannot reach on two loaded cores (it is not what is tested here).
    { database: { sqlite: path }, ledger: { path: join(dir, "ledger.sqlite") }, limits: { query_timeout_ms: SLOW_MACHINE_MS }, tables: [{ name: "staged" }] },
    { baseDir: dir, env: {} },
  );
  const reader = openReadOnly(path);
  catalog = readCatalog(reader, config.tables).catalog;
  reader.close();
  executor = new SqliteExecutor(path, config.limits, WORKERS);
  // Workers start in the background: a plain scan of the table, until one is split, shows both ready.
  for (let i = 0; i < 100 && executor.engine.stats.splitScans === 0; i++) {
    await rowsOf(await executor.stream(validated("SELECT id FROM staged")));
    await Bun.sleep(20);
  }
  expect(executor.engine.stats.splitScans).toBe(1);
});

afterAll(() => executor.close());

const validated = (sql: string) => validateQuery(sql, catalog, { maxQueryBytes: 10_000 });

/** The result's rows as arrays, read to the end. */
async function rowsOf(result: QueryResult): Promise<unknown[][]> {
  return tableOf(result).then((table) => table.toArray().map((row) => Object.values(row.toJSON())));
}

async function tableOf(result: QueryResult) {
  const bytes = "body" in result ? new Uint8Array(await new Response(result.body).arrayBuffer()) : Buffer.concat(result.complete);
  return tableFromIPC(bytes);
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_500 && !condition(); i++) await Bun.sleep(2);
  if (!condition()) throw new Error(`waited 5 s for ${what}`);
}

describe("a helper not back in time for an interactive query, then a wide range ahead of its ranges", () => {
  test("a fresh worker answers the query; the helper finishes its ranges and leaves; the export is whole and in order", async () => {
    const { splitScans, rangesRead, helpersSubstituted } = executor.engine.stats;
    const exported = executor.stream(validated(EXPORT_SQL)).then(tableOf);
    // The helper joined, then the first worker finished range 0 and took range 4.
    await until(() => executor.engine.stats.splitScans > splitScans, "the helper to join");
    await until(() => executor.engine.stats.rangesRead > rangesRead, "range 0");
    const interactive = await rowsOf(await executor.stream(validated(INTERACTIVE_SQL)));
    expect(interactive).toEqual(sqliteValues(path, INTERACTIVE_SQL, { safeIntegers: true }));
    // A fresh worker served it while the helper still reads its slow ranges.
    expect(executor.engine.stats.helpersSubstituted - helpersSubstituted).toBe(1);
    expect(executor.engine.workersRunning).toBe(WORKERS + 1);

    const table = await exported;
    expect(table.toArray().map((row) => Object.values(row.toJSON()))).toEqual(sqliteValues(path, EXPORT_SQL, { safeIntegers: true }));
    // Range 4's wide rows came in parts (no batch holds much over BATCH_MAX_BYTES of text) …
    const bodyChars = table.batches.map((batch) => batch.getChild("body")!.toArray().reduce((sum: number, text: string) => sum + text.length, 0));
    expect(bodyChars.filter((chars) => chars > BATCH_MAX_BYTES - WIDE).length).toBeGreaterThan(1);
    expect(Math.max(...bodyChars)).toBeLessThanOrEqual(BATCH_MAX_BYTES + WIDE);
    // … and each of the ten ranges (the empty one too) arrived once.
    expect(executor.engine.stats.rangesRead - rangesRead).toBe(10);
    // The helper left once its ranges were read: the pool is back to its size.
    await until(() => executor.engine.workersRunning === WORKERS, "the helper to leave");
  }, SLOW_MACHINE_MS);
});
