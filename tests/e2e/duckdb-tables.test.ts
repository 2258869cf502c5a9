/**
 * DuckDB tables (DESIGN.md §14) through the real listening server: a DuckDB file opened read-only,
 * Parquet files (a glob of two), a CSV file and an NDJSON file, all written by the test with DuckDB
 * itself. The schema with the Arrow types of §14 and each column's source_type, exact values in
 * every format, the dialect with SQLite's meaning or a 400 naming the construct and DuckDB, no
 * file but the configured ones reachable whatever the SQL says, the time limit, /readyz and
 * /metrics per source.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "apache-arrow";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir } from "../support/fixtures.ts";

let server: RunningServer;
let dir: string;
const TIME_LIMIT_MS = 1_000;

beforeAll(async () => {
  dir = tempDir();
  // A file no table names: no query may read it.
  writeFileSync(join(dir, "secret.csv"), "password\nhunter2\n");
  const duck = await DuckDBInstance.create(join(dir, "lake.duckdb"));
  const writer = await duck.connect();
  await writer.run(`
    CREATE TABLE trades (
      id BIGINT PRIMARY KEY, "at" TIMESTAMPTZ, pair VARCHAR NOT NULL, price DECIMAL(12,4), amount DOUBLE, small SMALLINT, qty INTEGER,
      ratio FLOAT, tags VARCHAR[], raw BLOB, ok BOOLEAN, day DATE, ref UUID, big HUGEINT, seen TIMESTAMP, meta STRUCT(k INTEGER)
    );
    INSERT INTO trades VALUES
      (1, '2024-01-02 03:04:05.123456+00', 'ETH/USDC', 2345.6789, 1.5, 7, 70000, 0.25, ['a', 'b'], from_hex('0102'), true, '2024-01-02', '00000000-0000-0000-0000-000000000001', 99999999999999999999999999999999999999, '2024-01-02 03:04:05.5', {'k': 1}),
      (2, '1969-12-31 23:59:59.999999+00', 'btc/usdc', -0.0001, NULL, -32768, -2147483648, NULL, [], from_hex(''), false, '1900-03-01', NULL, -1, NULL, NULL),
      (3, NULL, 'Été', NULL, -2.25, NULL, NULL, NULL, [NULL, 'z'], NULL, NULL, NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL, NULL, NULL);
    CREATE TABLE big AS SELECT x AS id, md5(x::VARCHAR) AS note FROM range(1, 600001) t(x);
    COPY (SELECT x AS id, 'p' || x AS pair, x * 1.5 AS price, DATE '2024-01-01' + x::INTEGER AS day FROM range(1, 51) t(x)) TO '${join(dir, "swaps-1.parquet")}' (FORMAT parquet);
    COPY (SELECT x AS id, 'p' || x AS pair, x * 1.5 AS price, DATE '2024-01-01' + x::INTEGER AS day FROM range(51, 101) t(x)) TO '${join(dir, "swaps-2.parquet")}' (FORMAT parquet);
    COPY (SELECT x AS id, 'acct-' || (x % 3) AS account, x * 10 AS amount FROM range(1, 11) t(x)) TO '${join(dir, "ledger.csv")}' (HEADER);
    COPY (SELECT x AS id, 'event ' || x AS name FROM range(1, 4) t(x)) TO '${join(dir, "events.ndjson")}' (FORMAT json);
  `);
  writer.closeSync();
  duck.closeSync();
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0", metrics: true },
      databases: { lake: { duckdb: "./lake.duckdb" }, files: { duckdb: ":memory:" } },
      limits: { query_timeout_ms: TIME_LIMIT_MS },
      tables: [
        { name: "trades", database: "lake", columns: { price: "Price in USD" } },
        { name: "big", database: "lake", source: "main.big" },
        { name: "swaps", database: "files", files: "./swaps-*.parquet" },
        { name: "ledger", database: "files", files: "./ledger.csv" },
        { name: "events", database: "files", files: "./events.ndjson" },
      ],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config, { workers: 2 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

const get = (sql: string, accept?: string) => fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, accept === undefined ? {} : { headers: { accept } });
const arrow = async (response: Response) => tableFromIPC(new Uint8Array(await response.arrayBuffer()));

describe("the schema", () => {
  test("GET /api/table/trades: the Arrow types of DESIGN.md §14 and each column's source_type", async () => {
    const doc = await (await fetch(`${server.url}/api/table/trades`)).json();
    const fields = doc.schema.fields.map((f: { name: string; data_type: string; nullable: boolean; metadata: Record<string, string> }) => [f.name, f.data_type, f.nullable, f.metadata.source_type]);
    expect(fields).toEqual([
      ["id", "Int64", false, "BIGINT"],
      ["at", "Timestamp<MICROSECOND, UTC>", true, "TIMESTAMP WITH TIME ZONE"],
      ["pair", "Utf8", false, "VARCHAR"],
      ["price", "Decimal[12e+4]", true, "DECIMAL(12,4)"],
      ["amount", "Float64", true, "DOUBLE"],
      ["small", "Int16", true, "SMALLINT"],
      ["qty", "Int32", true, "INTEGER"],
      ["ratio", "Float32", true, "FLOAT"],
      ["tags", "List<Utf8>", true, "VARCHAR[]"],
      ["raw", "Binary", true, "BLOB"],
      ["ok", "Bool", true, "BOOLEAN"],
      ["day", "Date32<DAY>", true, "DATE"],
      ["ref", "Utf8", true, "UUID"],
      ["big", "Decimal[38e0]", true, "HUGEINT"],
      ["seen", "Timestamp<MICROSECOND>", true, "TIMESTAMP"],
      ["meta", "Struct<{k:Int32}>", true, "STRUCT(k INTEGER)"],
    ]);
    expect(doc.schema.fields[3].metadata.description).toBe("Price in USD");
  });

  test("files: Parquet, CSV and NDJSON tables with the types DuckDB reads them as", async () => {
    const kinds = async (name: string) =>
      (await (await fetch(`${server.url}/api/table/${name}`)).json()).schema.fields.map((f: { name: string; data_type: string }) => `${f.name}:${f.data_type}`);
    expect(await kinds("swaps")).toEqual(["id:Int64", "pair:Utf8", "price:Decimal[21e+1]", "day:Date32<DAY>"]);
    expect(await kinds("ledger")).toEqual(["id:Int64", "account:Utf8", "amount:Int64"]);
    expect(await kinds("events")).toEqual(["id:Int64", "name:Utf8"]);
  });

  test("/readyz checks each source; /metrics counts rows by source and engine", async () => {
    const ready = await (await fetch(`${server.url}/readyz`)).json();
    expect(ready.checks).toMatchObject({ "database:lake": "ok", "database:files": "ok" });
    await (await get("SELECT id FROM swaps WHERE id <= 5")).arrayBuffer();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/arrow402_source_rows_served_total\{source="files",engine="duckdb"\} \d+/);
  });
});

describe("exact values", () => {
  test("Arrow: every type as DuckDB holds it", async () => {
    const response = await get("SELECT * FROM trades ORDER BY id");
    expect(response.status).toBe(200);
    const table = await arrow(response);
    expect(table.getChild("id")!.toArray()).toEqual(new BigInt64Array([1n, 2n, 3n]));
    expect(table.get(0)!.toJSON().at).toBe(Date.UTC(2024, 0, 2, 3, 4, 5, 123) + 0.456);
    expect(table.getChild("small")!.get(1)).toBe(-32768);
    expect(table.getChild("qty")!.get(1)).toBe(-2147483648);
    expect([...table.getChild("tags")!.get(0)!]).toEqual(["a", "b"]);
    expect([...table.getChild("tags")!.get(2)!]).toEqual([null, "z"]);
    expect([...table.getChild("raw")!.get(0)!]).toEqual([1, 2]);
    expect(table.getChild("ok")!.get(1)).toBe(false);
    expect(table.getChild("ref")!.get(2)).toBe("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    expect(table.getChild("meta")!.get(0)!.toJSON()).toEqual({ k: 1 });
    expect(table.getChild("meta")!.get(1)).toBeNull();
  });

  test.each([
    ["text/csv", "id,at,price,big\r\n1,2024-01-02T03:04:05.123456Z,2345.6789,99999999999999999999999999999999999999\r\n2,1969-12-31T23:59:59.999999Z,-0.0001,-1\r\n"],
    ["application/json", '[\n{"id":1,"at":"2024-01-02T03:04:05.123456Z","price":"2345.6789","big":"99999999999999999999999999999999999999"},\n{"id":2,"at":"1969-12-31T23:59:59.999999Z","price":"-0.0001","big":"-1"}\n]\n'],
  ])("%s: decimals, HUGEINT and µs timestamps exactly", async (accept, expected) => {
    const response = await get("SELECT id, at, price, big FROM trades WHERE id < 3 ORDER BY id", accept);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(expected);
  });

  test("two Parquet files read as one table; CSV and NDJSON", async () => {
    const swaps = await arrow(await get("SELECT id, pair FROM swaps WHERE id IN (50, 51) ORDER BY id"));
    expect(swaps.toArray().map((row) => row.pair)).toEqual(["p50", "p51"]);
    expect((await (await get("SELECT account FROM ledger WHERE id = 4", "text/csv")).text())).toBe("account\r\nacct-1\r\n");
    expect((await (await get("SELECT name FROM events ORDER BY id DESC LIMIT 1", "text/csv")).text())).toBe("name\r\nevent 3\r\n");
  });
});

describe("the dialect, with SQLite's meaning", () => {
  test.each([
    ["text sorts by code point", "SELECT pair FROM trades ORDER BY pair", ["ETH/USDC", "btc/usdc", "Été"]],
    ["LIKE folds ASCII case only", "SELECT pair FROM trades WHERE pair LIKE 'été' OR pair LIKE 'BTC%'", ["btc/usdc"]],
    ["integer division truncates", "SELECT pair FROM trades WHERE id / 2 = 1 ORDER BY id", ["btc/usdc", "Été"]],
  ])("%s", async (_name, sql, expected) => {
    const response = await get(sql);
    expect(response.status).toBe(200);
    expect([...(await arrow(response)).getChildAt(0)!]).toEqual(expected);
  });

  test("what DuckDB cannot run with SQLite's meaning is a 400 naming the construct and the engine", async () => {
    const response = await get("SELECT id FROM trades WHERE instr(raw, X'02') > 1");
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/instr\(\) of blobs is not available on tables served from DuckDB/);
  });
});

describe("no file but the configured ones", () => {
  test.each([
    ["read_csv('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')"],
    ["a file beside the configured ones", `SELECT * FROM read_csv('${join("DIR", "secret.csv")}')`],
    ["a path as a table name", `SELECT * FROM "DIR/secret.csv"`],
    ["a subquery reading a file", "SELECT id FROM trades WHERE pair IN (SELECT * FROM read_text('/etc/passwd'))"],
    ["a second statement", "SELECT id FROM trades; COPY trades TO '/tmp/out.csv'"],
    ["ATTACH", "ATTACH '/tmp/x.duckdb'"],
  ])("%s: refused, nothing read", async (_name, template) => {
    const response = await get(template.replaceAll("DIR", dir));
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain("hunter2");
  });

  test("even compiled SQL that names another file cannot read it: the source is locked down", async () => {
    const { openEngines, describeCatalog } = await import("../../src/engines/sources.ts");
    const config = resolveConfig({ databases: { files: { duckdb: ":memory:" } }, tables: [{ name: "ledger", files: "./ledger.csv" }] }, { baseDir: dir, env: {} });
    const engines = openEngines(config);
    try {
      await describeCatalog(config, engines);
      // The engine's own connection, as a query's: reading any other path, or changing the settings that forbid it, fails.
      const { loadDuckDB } = await import("../../src/engines/duckdb/native-library.ts");
      await loadDuckDB();
      const instance = (engines.get("files") as unknown as { instance: DuckDBInstance }).instance;
      const connection = await instance.connect();
      for (const sql of [
        `SELECT * FROM read_csv('${join(dir, "secret.csv")}')`,
        "SELECT * FROM read_csv('/etc/passwd')",
        "SET enable_external_access = true",
        `ATTACH '${join(dir, "other.duckdb")}'`,
        `COPY (SELECT 1) TO '${join(dir, "out.csv")}'`,
      ]) {
        await expect(connection.run(sql)).rejects.toThrow(/disabled by configuration|configuration has been locked/);
      }
      expect((await connection.runAndReadAll(`SELECT count(*) FROM files.ledger`)).getRowsJS()[0]![0]).toBe(10n);
      connection.closeSync();
    } finally {
      for (const engine of engines.values()) engine.close();
    }
  });
});

describe("reads stop", () => {
  test("past query_timeout_ms: 400 at the deadline, and the source serves the next query", async () => {
    const started = performance.now();
    const response = await get(`SELECT id FROM big WHERE replace(replace(note, 'a', '${"a".repeat(30)}'), 'a', '${"a".repeat(31)}') LIKE '%zz%'`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(`longer than the ${TIME_LIMIT_MS} ms limit`);
    expect(performance.now() - started).toBeLessThan(TIME_LIMIT_MS + 2_000);
    const next = await get("SELECT id FROM trades WHERE id = 1");
    expect(next.status).toBe(200);
  }, 60_000);

  test("a client that goes away mid-export: the read stops, and the source serves the next query", async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent("SELECT id, note FROM big")}`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const next = await get("SELECT id FROM swaps WHERE id = 1");
    expect(next.status).toBe(200);
  }, 60_000);
});
