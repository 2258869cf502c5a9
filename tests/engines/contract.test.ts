/**
 * The table engine contract (src/engines/engine.ts; DESIGN.md §9: one contract test runs against
 * every engine), over the same rows in each engine's own source: a real SQLite file, a real
 * PostgreSQL database, a DuckDB file, and Parquet files served through DuckDB. Every engine describes the configured tables (a missing one is a problem
 * with its config path), answers ping, counts, reads a result whole or streamed in every format with
 * the same rows, refuses a result over max_rows, stops at the time limit, and lets a reader that
 * goes away stop its read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import type { Catalog } from "../../src/catalog.ts";
import { resolveConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/types.ts";
import type { TableEngine } from "../../src/engines/engine.ts";
import { describeCatalog, openEngines } from "../../src/engines/sources.ts";
import { FORMATS } from "../../src/formats/registry.ts";
import { QueryExecutor } from "../../src/results/executor.ts";
import { validateQuery } from "../../src/sql/dialect.ts";
import { tempDir } from "../support/fixtures.ts";
import { usePostgres } from "../support/postgres.ts";

const pg = usePostgres();
const ROWS = 2_000;
const TIME_LIMIT_MS = 800;
const MAX_ROWS = 1_500;

interface Backend {
  name: string;
  config: Config;
  engine: TableEngine;
  catalog: Catalog;
  executor: QueryExecutor;
}
const backends: Backend[] = [];

beforeAll(async () => {
  const dir = tempDir();
  const db = new Database(join(dir, "items.sqlite"), { create: true });
  db.run("CREATE TABLE items (id INTEGER PRIMARY KEY NOT NULL, name TEXT NOT NULL, price REAL, note TEXT)");
  db.run(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS}) INSERT INTO items SELECT x, 'item ' || x, CASE WHEN x % 5 = 0 THEN NULL ELSE x * 0.5 END, hex(randomblob(16)) FROM c`);
  db.run("CREATE TABLE big (id INTEGER PRIMARY KEY NOT NULL, note TEXT)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) INSERT INTO big SELECT x, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' FROM c");
  db.close();
  const admin = new SQL(pg.url);
  await admin.unsafe(`CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL, price double precision, note text);
    INSERT INTO items SELECT x, 'item ' || x, CASE WHEN x % 5 = 0 THEN NULL ELSE x * 0.5 END, md5(x::text) FROM generate_series(1, ${ROWS}) x;
    CREATE TABLE big (id bigint PRIMARY KEY, note text);
    INSERT INTO big SELECT x, repeat('a', 32) FROM generate_series(1, 300000) x;`);
  await admin.close();
  // The same tables in a DuckDB file, and as Parquet files (two for items, read as one table), written by DuckDB.
  // big's notes differ row by row: DuckDB would compute a function once per distinct value of a dictionary.
  const duck = await DuckDBInstance.create(join(dir, "items.duckdb"));
  const writer = await duck.connect();
  await writer.run(`CREATE TABLE items (id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, price DOUBLE, note VARCHAR);
    INSERT INTO items SELECT x, 'item ' || x, CASE WHEN x % 5 = 0 THEN NULL ELSE x * 0.5 END, md5(x::VARCHAR) FROM range(1, ${ROWS + 1}) t(x);
    CREATE TABLE big (id BIGINT PRIMARY KEY, note VARCHAR);
    INSERT INTO big SELECT x, repeat('a', 32) || x FROM range(1, 300001) t(x);
    COPY (SELECT * FROM items WHERE id <= 1000 ORDER BY id) TO '${join(dir, "items-1.parquet")}' (FORMAT parquet);
    COPY (SELECT * FROM items WHERE id > 1000 ORDER BY id) TO '${join(dir, "items-2.parquet")}' (FORMAT parquet);
    COPY (SELECT * FROM big ORDER BY id) TO '${join(dir, "big.parquet")}' (FORMAT parquet);`);
  writer.closeSync();
  duck.closeSync();
  const limits = { max_rows: MAX_ROWS, query_timeout_ms: TIME_LIMIT_MS };
  const sources = [
    ["sqlite", { sqlite: "./items.sqlite" }, {}, {}],
    ["postgres", { postgres: pg.url }, {}, {}],
    ["duckdb", { duckdb: "./items.duckdb" }, {}, {}],
    ["parquet", { duckdb: ":memory:" }, { files: "./items-*.parquet" }, { files: "./big.parquet" }],
  ] as const;
  for (const [name, source, items, big] of sources) {
    const config = resolveConfig({ databases: { main: source }, limits, tables: [{ name: "items", ...items }, { name: "big", ...big }] }, { baseDir: dir, env: {} });
    const engines = openEngines(config, { workers: 2 });
    const catalog = await describeCatalog(config, engines);
    backends.push({ name, config, engine: engines.get("main")!, catalog, executor: new QueryExecutor(engines, config.limits) });
  }
}, 60_000);

afterAll(() => {
  for (const backend of backends) backend.executor.close();
});

const query = (backend: Backend, sql: string) => validateQuery(sql, backend.catalog, { maxQueryBytes: 16_384 });
const engines = () => backends;

async function bytesOf(result: { complete: Uint8Array[] } | { body: ReadableStream<Uint8Array> }): Promise<Uint8Array> {
  const chunks = "complete" in result ? result.complete : await Array.fromAsync(result.body);
  return new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
}

describe.each(["sqlite", "postgres", "duckdb", "parquet"])("%s engine", (name) => {
  const backend = () => engines().find((b) => b.name === name)!;

  test("describes the configured table, with Arrow kinds and nullability", () => {
    const table = backend().catalog.table("items")!;
    // A view over files declares no column NOT NULL.
    const files = name === "parquet";
    expect(table.columns.map((c) => [c.name, c.kind, c.nullable])).toEqual([
      ["id", "int64", files],
      ["name", "utf8", files],
      ["price", "float64", true],
      ["note", "utf8", true],
    ]);
  });

  test("a table the source lacks is a problem with its config path", async () => {
    const b = backend();
    // Not served from files: a table the source itself lacks.
    const { files: _files, ...table } = b.config.tables[0]!;
    const described = await b.engine.describe([{ config: { ...table, name: "missing", source: "missing" }, index: 3 }]);
    expect(described.tables).toEqual([]);
    expect(described.problems).toHaveLength(1);
    expect(described.problems[0]).toStartWith("tables[3].name: ");
  });

  test("ping answers", async () => {
    await backend().engine.ping();
  });

  test("counts", async () => {
    expect(await backend().executor.count(query(backend(), "SELECT id FROM items WHERE price IS NULL"))).toBe(ROWS / 5);
  });

  test.each(FORMATS.map((format) => format.name))("%s: the same rows whole and streamed", async (formatName) => {
    const b = backend();
    const format = FORMATS.find((f) => f.name === formatName)!;
    const q = query(b, "SELECT id, name, price FROM items WHERE id <= 1200 ORDER BY id DESC");
    const whole = await b.executor.collect(q, format);
    const streamed = await bytesOf(await b.executor.stream(q, format));
    expect(whole!.rows).toBe(1200);
    expect(await bytesOf(whole!.result)).toEqual(streamed);
    if (formatName === "arrow") {
      const table = tableFromIPC(streamed);
      expect(table.numRows).toBe(1200);
      expect(table.get(0)!.toJSON()).toEqual({ id: 1200n, name: "item 1200", price: null });
    }
  });

  test("the same rows read twice are the same bytes (a replay's digest, DESIGN.md §17)", async () => {
    const b = backend();
    const q = query(b, "SELECT * FROM items WHERE id <= 1000");
    const [first, second] = [await b.executor.collect(q), await b.executor.collect(q)];
    expect(first!.digest).toBe(second!.digest);
  });

  test("a streamed result over max_rows is refused before any byte; read whole, its read finds it", async () => {
    const b = backend();
    const q = query(b, "SELECT id FROM items");
    await expect(b.executor.stream(q)).rejects.toThrow(`more than the limit of ${MAX_ROWS}`);
    await expect(b.executor.collect(q)).rejects.toThrow(`more than the limit of ${MAX_ROWS}`);
  });

  test("the time limit stops a read: 400", async () => {
    const b = backend();
    const slow = `SELECT id FROM big WHERE replace(replace(replace(note, 'a', '${"a".repeat(10)}'), 'a', '${"a".repeat(10)}'), 'a', '${"a".repeat(10)}') LIKE '%zzzz%' LIMIT 10`;
    const started = performance.now();
    await expect(b.executor.collect(query(b, slow))).rejects.toThrow(`longer than the ${TIME_LIMIT_MS} ms limit`);
    expect(performance.now() - started).toBeLessThan(TIME_LIMIT_MS + 2_000);
  });

  test("a reader that goes away stops the read, and the engine serves the next one", async () => {
    const b = backend();
    const result = await b.executor.stream(query(b, "SELECT * FROM items WHERE id <= 1400"));
    if ("body" in result) await result.body.cancel();
    const next = await b.executor.collect(query(b, "SELECT id FROM items WHERE id <= 3"));
    expect(next!.rows).toBe(3);
    // DuckDB stops an interrupted statement (the time limit's, just before) at the end of the piece of
    // work in flight, seconds on that query's 30 KB strings; its threads serve this read after it.
  }, 30_000);
});
