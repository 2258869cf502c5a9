import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { openReadOnly, readCatalog } from "../../src/engines/sqlite/catalog.ts";
import { evenPositions } from "../../src/engines/even-sample.ts";
import { SqliteEngine } from "../../src/engines/sqlite/engine.ts";
import { takeSnapshot } from "../../src/dashboards/snapshot.ts";
import { createMarketDatabase, tempDir } from "./support.ts";
import { DuckDBInstance } from "@duckdb/node-api";
import { resolveConfig } from "../../src/config/load.ts";
import { describeCatalog, openEngines } from "../../src/engines/sources.ts";
import { decodeSnapshot } from "../../src/dashboards/browser/data.ts";

const engines: SqliteEngine[] = [];
afterAll(() => engines.forEach((engine) => engine.close()));

function market() {
  const path = join(tempDir(), "market.sqlite");
  createMarketDatabase(path);
  const extra = new Database(path);
  extra.run("CREATE TABLE pairs (code TEXT PRIMARY KEY, base TEXT) WITHOUT ROWID");
  extra.run("CREATE TABLE legacy (n INT PRIMARY KEY, label TEXT)");
  extra.run("CREATE TABLE descending (n INTEGER PRIMARY KEY DESC, label TEXT)");
  extra.run("CREATE VIEW recent_swaps AS SELECT id, ts, amount_usd FROM swaps");
  extra.close();
  const db = openReadOnly(path);
  const names = ["swaps", "blocks", "odd<table>", "pairs", "legacy", "descending", "recent_swaps"];
  const { catalog, problems } = readCatalog(db, names.map((name) => ({ name, database: "main", source: name, description: "", columns: {}, priceTags: [] })));
  expect(problems).toEqual([]);
  const engine = new SqliteEngine(path, { maxRows: 1_000_000, queryTimeoutMs: 10_000 }, 1);
  engines.push(engine);
  return { db, engine, table: (name: string) => catalog.table(name)! };
}

describe("evenPositions", () => {
  test.each([
    [10, 20, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]],
    [10, 4, [1, 4, 7, 10]],
    [1200, 3, [1, 601, 1200]],
    [5, 1, [5]],
    [5, 0, []],
  ])("%d rows, cap %d → %o", (total, cap, positions) => {
    expect(evenPositions(total, cap)).toEqual(positions);
  });

  test("a large table: exactly cap distinct positions, first and last included, evenly spread", () => {
    const positions = evenPositions(250_000, 5000);
    expect(new Set(positions).size).toBe(5000);
    expect(positions[0]).toBe(1);
    expect(positions.at(-1)).toBe(250_000);
    const gaps = positions.slice(1).map((p, i) => p - positions[i]!);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(49);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(51);
  });
});

describe("the rowid alias the charts leave out (generate.ts) is the catalog's", () => {
  test.each([
    ["swaps", "id"],
    ["blocks", "number"],
    ["odd<table>", undefined],
    // Only INTEGER PRIMARY KEY aliases the rowid: not INT, not DESC, not a WITHOUT ROWID table, not a view.
    ["legacy", undefined],
    ["descending", undefined],
    ["pairs", undefined],
    ["recent_swaps", undefined],
  ])("%s → %s", (name, alias) => {
    const { table } = market();
    expect(table(name).columns.filter((c) => c.rowidAlias).map((c) => c.name)).toEqual(alias === undefined ? [] : [alias]);
  });
});

describe("takeSnapshot", () => {
  test("samples a large table evenly along its time column, most recent first, covering its whole range", async () => {
    const { db, engine, table } = market();
    const snapshot = await takeSnapshot(engine, table("swaps"), 300);
    expect(snapshot.rows).toHaveLength(300);
    expect(snapshot.totalRows).toBe(1200);
    expect(snapshot.sampled).toBe(true);
    expect(snapshot.orderedBy).toBe("ts");
    const ids = snapshot.rows.map((row) => Number(row[0]));
    const range = db.query<{ first: string; last: string; newest: number; oldest: number }, []>(
      "SELECT min(ts) AS first, max(ts) AS last, (SELECT id FROM swaps ORDER BY ts DESC LIMIT 1) AS newest, (SELECT id FROM swaps ORDER BY ts LIMIT 1) AS oldest FROM swaps",
    ).get()!;
    expect(ids[0]).toBe(range.newest);
    expect(ids.at(-1)).toBe(range.oldest);
    expect(snapshot.span).toEqual({ from: Date.parse(range.first), to: Date.parse(range.last), count: 300 });
    // Ids rise with ts in this table: evenly spaced rows are 4 (1199/299) apart, give or take one.
    const gaps = ids.slice(1).map((id, i) => ids[i]! - id);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(3);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(5);
  });

  test("keeps a table within the cap whole", async () => {
    const { engine, table } = market();
    const snapshot = await takeSnapshot(engine, table("blocks"));
    expect(snapshot.sampled).toBe(false);
    expect(snapshot.rows.map((row) => row[0])).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(i + 1)));
    expect(snapshot.span).toBeUndefined();
  });

  test("samples a table without a time column along its rowid, in table order", async () => {
    const { engine, table } = market();
    const snapshot = await takeSnapshot(engine, table("blocks"), 4);
    expect(snapshot.rows.map((row) => row[0])).toEqual([1n, 4n, 7n, 10n]);
    expect(snapshot.sampled).toBe(true);
  });

  test("samples a view (no rowid) along its time column too", async () => {
    const { engine, table } = market();
    const snapshot = await takeSnapshot(engine, table("recent_swaps"), 3);
    expect(snapshot.rows.map((row) => row[0])).toEqual([1200n, 601n, 1n]);
    expect(snapshot.totalRows).toBe(1200);
  });
});

describe("a DuckDB table's STRUCT and LIST columns (DESIGN.md §14)", () => {
  test("the snapshot keeps a struct's members, and the preview shows nested values as exact text", async () => {
    const dir = tempDir();
    const duck = await DuckDBInstance.create(":memory:");
    const writer = await duck.connect();
    await writer.run(
      `COPY (SELECT * FROM (VALUES (1, {'price': 12.34::DECIMAL(10,2), 'tags': ['a', NULL], 'inner': {'x': 'p'}}, [[1], NULL]), (2, NULL, NULL), (3, {'price': NULL, 'tags': NULL, 'inner': NULL}, [])) t(id, s, l)) TO '${join(dir, "nested.parquet")}' (FORMAT parquet)`,
    );
    writer.closeSync();
    duck.closeSync();
    const config = resolveConfig({ databases: { lake: { duckdb: ":memory:" } }, tables: [{ name: "nested", files: "./nested.parquet" }] }, { baseDir: dir, env: {} });
    const engines = openEngines(config);
    try {
      const nested = (await describeCatalog(config, engines)).table("nested")!;
      const snapshot = await takeSnapshot(engines.get("lake")!, nested);
      const rows = decodeSnapshot(snapshot.arrow, nested.columns.map(({ name, kind }) => ({ name, kind })));
      expect(rows.map((row) => [row.id, row.s, row.l])).toEqual([
        [1, '{"price": 12.34, "tags": ["a", null], "inner": {"x": "p"}}', "[[1], null]"],
        [2, null, null],
        [3, '{"price": null, "tags": null, "inner": null}', "[]"],
      ]);
    } finally {
      for (const engine of engines.values()) engine.close();
    }
  });
});
