/**
 * A split scan whose helper was replaced before any range came in parts (db/striped.ts
 * `replaceHelper`), and whose other worker then reads a range of wide rows ahead of the helper's
 * ranges: those parts cannot wait for their turn without holding back the only worker that will
 * read it. They are kept without holding it back, up to a limit; past it the scan is stopped with
 * an error the client can retry, instead of holding the wide rows in memory.
 *
 * The table is staged so each worker's ranges are known (stripe-plan.ts RANGE_ROWIDS = 4,096):
 *   range 0  500 slow rows, then narrow ones: the first worker reads it while the helper joins;
 *   range 1  no rows (a gap): the first worker then holds ranges 1 and 4, the helper 2 and 3;
 *   2 and 3  slow rows: the helper is still reading range 2 when an interactive query asks it back;
 *   range 4  1,300 slow rows, then ~15 MB of wide rows between the rows the planner samples;
 *   5 to 9   narrow rows.
 * "Slow" is a row the costly WHERE reads: `replace` nested 5 times (the most growth the dialect
 * allows) builds a 200 KB text from its 200 characters (~0.3 ms); other rows are let through by the
 * first, cheap, term of the OR.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { openReadOnly, readCatalog, type Catalog } from "../../src/db/catalog.ts";
import { QueryExecutor, type QueryResult } from "../../src/db/execute.ts";
import { RANGE_ROWIDS } from "../../src/db/stripe-plan.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { tempDir } from "../support/fixtures.ts";
import { sqliteValues } from "../support/sqlite-direct.ts";

const ROWS = 10 * RANGE_ROWIDS;
const rangeOf = (id: number) => Math.floor((id - 1) / RANGE_ROWIDS);
const inRange = (id: number) => id - rangeOf(id) * RANGE_ROWIDS;
/** 8,000 characters, well past what the planner's samples (every 2,560 rowids here) allow, and none of them a sampled row. */
const WIDE = 8_000;
const isWide = (id: number) => rangeOf(id) === 4 && inRange(id) > 2_100 && inRange(id) <= 4_000;
const isSlow = (id: number) => (rangeOf(id) === 0 && inRange(id) <= 500) || rangeOf(id) === 2 || rangeOf(id) === 3 || (rangeOf(id) === 4 && inRange(id) <= 1_300);
const KEPT_MAX_BYTES = 8 * 1024 * 1024;

const grown = (depth: number): string => (depth === 0 ? "t" : `replace(${grown(depth - 1)}, 'a', 'aaaa')`);
const COSTLY = `kind = 'narrow' OR length(${grown(5)}) > 0`;
const EXPORT_SQL = `SELECT id, kind, body FROM staged WHERE ${COSTLY}`;
/** An interactive query (a LIMIT): it overruns the HTTP thread's budget on slow rows and waits for a worker. */
const INTERACTIVE_SQL = `SELECT id FROM staged WHERE length(${grown(5)}) > 0 LIMIT 20`;

let path: string;
let catalog: Catalog;
let executor: QueryExecutor;

beforeAll(async () => {
  const dir = tempDir();
  path = join(dir, "staged.sqlite");
  const db = new Database(path, { create: true });
  db.run("CREATE TABLE staged (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, t TEXT NOT NULL, body TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO staged VALUES (?, ?, ?, ?)");
  db.transaction(() => {
    for (let id = 1; id <= ROWS; id++) {
      if (rangeOf(id) === 1) continue;
      const kind = isSlow(id) ? "slow" : "narrow";
      insert.run(id, kind, "a".repeat(200), isWide(id) ? String.fromCharCode(97 + (id % 26)).repeat(WIDE) : `b${id}`);
    }
  })();
  db.close();
  const config = resolveConfig(
    { database: { sqlite: path }, ledger: { path: join(dir, "ledger.sqlite") }, tables: [{ name: "staged" }] },
    { baseDir: dir, env: {} },
  );
  const reader = openReadOnly(path);
  catalog = readCatalog(reader, config.tables).catalog;
  reader.close();
  executor = new QueryExecutor(path, { ...config.limits, keptMaxBytes: KEPT_MAX_BYTES }, 2);
  // Workers start in the background: a plain scan of the table, until one is split, shows both ready.
  for (let i = 0; i < 100 && executor.stats.splitScans === 0; i++) {
    await rowsOf(await executor.stream(validated("SELECT id FROM staged")));
    await Bun.sleep(20);
  }
  expect(executor.stats.splitScans).toBe(1);
});

afterAll(() => executor.close());

const validated = (sql: string) => validateQuery(sql, catalog, { maxQueryBytes: 10_000 });

/** The result's rows as arrays, read to the end. */
async function rowsOf(result: QueryResult): Promise<unknown[][]> {
  const bytes = "body" in result ? new Uint8Array(await new Response(result.body).arrayBuffer()) : Buffer.concat(result.complete);
  return tableFromIPC(bytes).toArray().map((row) => Object.values(row.toJSON()));
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_500 && !condition(); i++) await Bun.sleep(2);
  if (!condition()) throw new Error(`waited 5 s for ${what}`);
}

describe("a split scan whose helper was replaced, then a wide range that cannot wait", () => {
  test("is stopped past the limit with an error naming what to do, and the next query is answered", async () => {
    const { splitScans, rangesRead, helpersReplaced } = executor.stats;
    const exported = executor.stream(validated(EXPORT_SQL)).then(rowsOf).catch((error: Error) => error);
    // The helper joined, then the first worker finished range 0 and took range 4.
    await until(() => executor.stats.splitScans > splitScans, "the helper to join");
    await until(() => executor.stats.rangesRead > rangesRead, "range 0");
    const interactive = await rowsOf(await executor.stream(validated(INTERACTIVE_SQL)));
    expect(interactive).toEqual(sqliteValues(path, INTERACTIVE_SQL, { safeIntegers: true }));
    expect(executor.stats.helpersReplaced - helpersReplaced).toBe(1);

    const outcome = await exported;
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toBe(
      "The export was stopped: another query took one of its workers while it read rows too wide to hold (over 8 MiB waiting); retry it.",
    );
    // The workers were replaced; the table is still read whole, split, by the next query.
    const splitBefore = executor.stats.splitScans;
    const again = await rowsOf(await executor.stream(validated("SELECT id, kind FROM staged")));
    expect(again).toEqual(sqliteValues(path, "SELECT id, kind FROM staged", { safeIntegers: true }));
    expect(executor.stats.splitScans).toBe(splitBefore + 1);
  }, 30_000);
});
