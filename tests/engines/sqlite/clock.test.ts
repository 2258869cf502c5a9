/**
 * Row counts (per_row quotes) and the count cache: a count kept at the current data version is
 * used before anything is read; a WHERE that calls a date/time function selects rows by the clock
 * as well as by the data (src/sql/allowlist.ts CLOCK_FUNCTIONS), so its counts are never kept.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openReadOnly, readCatalog, type Catalog } from "../../../src/engines/sqlite/catalog.ts";
import { SqliteExecutor } from "./executor.ts";
import { resolveConfig } from "../../../src/config/load.ts";
import { validateQuery } from "../../../src/sql/dialect.ts";
import { tempDir } from "../../support/fixtures.ts";
import { sqliteValues } from "../../support/sqlite-direct.ts";

let executor: SqliteExecutor;
let catalog: Catalog;
let countWhere: (condition: string) => number;

beforeAll(() => {
  const dir = tempDir();
  const path = join(dir, "clock.sqlite");
  const db = new Database(path, { create: true });
  // Counts run on a worker and are cached.
  db.run("CREATE TABLE big (id INTEGER PRIMARY KEY, n INTEGER)");
  db.run("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300000) INSERT INTO big SELECT i, i % 997 FROM s");
  db.close();
  const config = resolveConfig({ database: { sqlite: path }, ledger: { path: join(dir, "ledger.sqlite") }, tables: [{ name: "big" }] }, { baseDir: dir, env: {} });
  const reader = openReadOnly(path);
  catalog = readCatalog(reader, config.tables).catalog;
  reader.close();
  executor = new SqliteExecutor(path, config.limits, 2);
  countWhere = (condition) => {
    const [count] = sqliteValues(path, `SELECT count(*) FROM big WHERE ${condition}`)[0] as [number];
    return count;
  };
});

afterAll(() => executor.close());

const validated = (sql: string) => validateQuery(sql, catalog, { maxQueryBytes: 10_000 });

test("the count of a WHERE that reads the clock follows the clock (a WHERE without one does not read it)", async () => {
  // n ≤ 1 or n ≤ 2, by the parity of the current millisecond; every row is examined.
  const clock = validated("SELECT id FROM big WHERE n <= CAST(strftime('%f', 'now') * 1000 AS INTEGER) % 2 + 1");
  expect(clock.readsClock).toBe(true);
  const seen = new Set<number>();
  for (let i = 0; i < 40 && seen.size < 2; i++) {
    seen.add(await executor.count(clock));
    await Bun.sleep(1);
  }
  expect([...seen].sort((a, b) => a - b)).toEqual([countWhere("n <= 1"), countWhere("n <= 2")]);

  const plain = validated("SELECT id FROM big WHERE n <= 2");
  expect(plain.readsClock).toBe(false);
  expect(await executor.count(plain)).toBe(countWhere("n <= 2"));
});
