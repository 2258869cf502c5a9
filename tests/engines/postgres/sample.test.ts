/**
 * The PostgreSQL engine's reads for the operator's commands (src/engines/postgres/sample.ts) on a
 * real PostgreSQL: a dashboard's sample keeps the positions of even-sample.ts along the time column
 * (most recent first, NULL times last, as SQLite's), the whole table when it fits, the table's order
 * without a time column, values exactly as a query reads them, a refused value named, the query
 * time limit; validate's scan hears of every refused value with its row and ctid and reads on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import type { TableInfo } from "../../../src/catalog.ts";
import type { TableConfig } from "../../../src/config/types.ts";
import type { StoredMisfit } from "../../../src/engines/engine.ts";
import { evenPositions } from "../../../src/engines/even-sample.ts";
import { PostgresEngine } from "../../../src/engines/postgres/engine.ts";
import { BadRequestError, ValueDoesNotFitError } from "../../../src/errors.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();
let admin: SQL;
let engine: PostgresEngine;
let tables: Map<string, TableInfo>;

const ROWS = 1000;

function tableConfig(name: string): TableConfig {
  return { name, database: "warehouse", source: name, description: "", columns: {}, priceTags: [] };
}

async function describeTables(on: PostgresEngine, names: string[]): Promise<Map<string, TableInfo>> {
  const described = await on.describe(names.map((name, index) => ({ config: tableConfig(name), index })));
  expect(described.problems).toEqual([]);
  return new Map(described.tables.map((table) => [table.name, table]));
}

beforeAll(async () => {
  admin = new SQL(postgres.url);
  // readings: time order is a permutation of id order (7919 is prime to 1000), µs apart from whole seconds.
  await admin.unsafe(`
    CREATE TABLE readings (id int4 PRIMARY KEY, at timestamptz NOT NULL, level numeric(12,4), note text);
    INSERT INTO readings SELECT g, timestamptz '2024-01-01 00:00:00+00' + ((g * 7919) % ${ROWS}) * interval '7 minutes 0.000001 seconds', g * 1.0001, 'n' || g
    FROM generate_series(1, ${ROWS}) g;
    CREATE VIEW readings_view AS SELECT id, at FROM readings;
    CREATE TABLE kinds (
      id int4, at timestamptz, local timestamp, small int2, price numeric(12,4), ratio real, tags int4[], day date, label text, big int8
    );
    INSERT INTO kinds VALUES
      (1, '2024-01-02 03:04:05.123456+00', '2024-01-02 03:04:05.123456', -32768, 2345.6789, 0.25, ARRAY[1, NULL, 3], '2024-01-02', 'a', 9223372036854775807),
      (2, NULL, NULL, 32767, -0.0001, NULL, ARRAY[]::int4[], '1900-03-01', NULL, NULL),
      (3, '1969-12-31 23:59:59.999999+00', '2262-04-11 23:47:16.854775', NULL, 99999999.9999, -1.5, NULL, NULL, 'Été', -9223372036854775808);
    CREATE TABLE plain (id int8, note text);
    INSERT INTO plain SELECT g, 'p' || g FROM generate_series(1, 50) g;
    CREATE TABLE broken (id int4, at timestamptz, price numeric(6,2));
    INSERT INTO broken VALUES (1, '2024-01-01 00:00:00+00', 1.5), (2, 'infinity', 'NaN'), (3, '2024-01-02 00:00:00+00', 2), (4, '-infinity', 3);
    CREATE VIEW broken_view AS SELECT * FROM broken;
    CREATE VIEW slow AS SELECT g AS id, now() AS at FROM generate_series(1, 3) g, LATERAL (SELECT pg_sleep(1)) s;
  `);
  engine = new PostgresEngine({ name: "warehouse", url: postgres.url, schema: "public", maxConnections: 2 }, { maxRows: 1_000_000, queryTimeoutMs: 10_000 });
  tables = await describeTables(engine, ["readings", "readings_view", "kinds", "plain", "broken", "broken_view"]);
});

afterAll(async () => {
  engine?.close();
  await admin?.close();
});

/** The ids of a relation in time order, oldest first (ids are distinct, times too). */
async function idsByTime(relation: string): Promise<number[]> {
  return ((await admin.unsafe(`SELECT id FROM ${relation} ORDER BY at`)) as { id: number }[]).map((row) => row.id);
}

describe("sample", () => {
  test.each([
    ["readings", 100],
    ["readings", 2],
    ["readings_view", 3],
    ["readings_view", 999],
  ])("%s, cap %d: the positions of evenPositions along the time column, most recent first", async (name, cap) => {
    const sample = await engine.sample(tables.get(name)!, cap, "at");
    expect(sample).toMatchObject({ totalRows: ROWS, sampled: true });
    const ordered = await idsByTime(name);
    const expected = evenPositions(ROWS, cap).map((position) => ordered[position - 1]).reverse();
    expect(sample.rows.map((row) => row[0])).toEqual(expected);
  });

  test("a table within the cap is read whole, most recent first, NULL times last; values exactly as a query reads them", async () => {
    const sample = await engine.sample(tables.get("kinds")!, 10, "at");
    expect(sample).toMatchObject({ totalRows: 3, sampled: false });
    expect(sample.rows).toEqual([
      [1, 1704164645123456n, 1704164645123456n, -32768, 23456789n, 0.25, [1, null, 3], 19724, "a", 9223372036854775807n],
      [3, -1n, 9223372036854775n, null, 999999999999n, -1.5, null, null, "Été", -9223372036854775808n],
      [2, null, null, 32767, -1n, null, [], -25508, null, null],
    ]);
  });

  test("without a time column: the table's order, first and last included", async () => {
    const sample = await engine.sample(tables.get("plain")!, 4, null);
    expect(sample).toMatchObject({ totalRows: 50, sampled: true });
    expect(sample.rows).toEqual(evenPositions(50, 4).map((id) => [BigInt(id), `p${id}`]));
  });

  test("a value the column cannot hold fails the sample, naming the table and the column", async () => {
    const error = await engine.sample(tables.get("broken")!, 10, "at").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValueDoesNotFitError);
    expect(error).toMatchObject({ table: "broken", column: "at", rowid: null });
    expect((error as ValueDoesNotFitError).operatorMessage).toContain("timestamp 'infinity' is no point in time a timestamp column holds");
  });

  test("the query time limit bounds it", async () => {
    const limited = new PostgresEngine({ name: "warehouse", url: postgres.url, schema: "public", maxConnections: 1 }, { maxRows: 1_000_000, queryTimeoutMs: 300 });
    try {
      const slow = (await describeTables(limited, ["slow"])).get("slow")!;
      const started = performance.now();
      const error = await limited.sample(slow, 10, "at").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as Error).message).toContain("300 ms limit");
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      limited.close();
    }
  });
});

describe("scan", () => {
  test("every value the decoder refuses, with its row and ctid; the read goes on to the last row", async () => {
    const found: StoredMisfit[] = [];
    const { rows } = await engine.scan(tables.get("broken")!, (misfit) => found.push(misfit));
    expect(rows).toBe(4);
    expect(found).toEqual([
      { column: 1, row: "row 2 (ctid '(0,2)')", detail: "timestamp 'infinity' is no point in time a timestamp column holds" },
      { column: 2, row: "row 2 (ctid '(0,2)')", detail: "numeric NaN is not a number Decimal128(6, 2) can hold" },
      { column: 1, row: "row 4 (ctid '(0,4)')", detail: "timestamp '-infinity' is no point in time a timestamp column holds" },
    ]);
  });

  test("a view's rows are named by position only (they have no ctid of their own)", async () => {
    const found: StoredMisfit[] = [];
    expect(await engine.scan(tables.get("broken_view")!, (misfit) => found.push(misfit))).toEqual({ rows: 4 });
    expect(found.map((misfit) => [misfit.column, misfit.row])).toEqual([
      [1, "row 2"],
      [2, "row 2"],
      [1, "row 4"],
    ]);
  });

  test("a table whose values all fit: every row read, nothing found", async () => {
    const found: StoredMisfit[] = [];
    expect(await engine.scan(tables.get("readings")!, (misfit) => found.push(misfit))).toEqual({ rows: ROWS });
    expect(await engine.scan(tables.get("readings_view")!, (misfit) => found.push(misfit))).toEqual({ rows: ROWS });
    expect(found).toEqual([]);
  });
});
