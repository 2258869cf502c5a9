/**
 * PostgreSQL tables (DESIGN.md §14) through the real listening server and a real PostgreSQL server:
 * the schema with the Arrow types of §14 and each column's source_type, exact values in every
 * format, the dialect with SQLite's meaning or a 400 naming the construct and the engine, the time
 * limit and a client that goes away stopping the statement on the server, and /readyz per source.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir } from "../support/fixtures.ts";
import { usePostgres } from "../support/postgres.ts";
import { Database } from "bun:sqlite";

const pg = usePostgres();
let server: RunningServer;
let admin: SQL;

const TIME_LIMIT_MS = 1_000;

beforeAll(async () => {
  admin = new SQL(pg.url);
  await admin.unsafe(`
    CREATE SCHEMA analytics;
    CREATE TABLE trades (
      id bigint PRIMARY KEY, at timestamptz, pair text NOT NULL, price numeric(12,4), amount double precision,
      small smallint, qty integer, ratio real, tags text[], raw bytea, ok boolean, day date, meta jsonb, ref uuid
    );
    INSERT INTO trades VALUES
      (1, '2024-01-02 03:04:05.123456+00', 'ETH/USDC', 2345.6789, 1.5, 7, 70000, 0.25, ARRAY['a','b'], '\\x0102', true, '2024-01-02', '{"k": [1, 2]}', '00000000-0000-0000-0000-000000000001'),
      (2, '1969-12-31 23:59:59.999999+00', 'btc/usdc', -0.0001, NULL, -32768, -2147483648, NULL, ARRAY[]::text[], '\\x', false, '1900-03-01', NULL, NULL),
      (3, NULL, 'Été', NULL, -2.25, NULL, NULL, NULL, ARRAY[NULL, 'z'], NULL, NULL, NULL, '"s"', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'),
      (9223372036854775807, '2262-04-11 23:47:16.854775+00', 'max', 99999999.9999, 1e300, 32767, 2147483647, 3.4e38, ARRAY['x'], '\\xff', true, '9999-12-31', '[]', NULL);
    CREATE TABLE analytics.swaps_v2 (id bigint, pair text);
    INSERT INTO analytics.swaps_v2 SELECT g, 'p' || g FROM generate_series(1, 50) g;
    CREATE TABLE big (id bigint, note text);
    INSERT INTO big SELECT g, md5(g::text) FROM generate_series(1, 600000) g;
  `);
  const dir = tempDir();
  new Database(join(dir, "local.sqlite"), { create: true }).run("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'local')");
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0", metrics: true },
      databases: { local: { sqlite: "./local.sqlite" }, warehouse: { postgres: pg.url } },
      limits: { query_timeout_ms: TIME_LIMIT_MS },
      tables: [
        { name: "notes", database: "local" },
        { name: "trades", database: "warehouse", description: "Trades", columns: { price: "Price in USD" } },
        { name: "swaps", database: "warehouse", source: "analytics.swaps_v2" },
        { name: "big", database: "warehouse" },
      ],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config, { workers: 2 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await admin?.close();
});

const get = (sql: string, accept?: string) =>
  fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, accept === undefined ? {} : { headers: { accept } });

describe("the schema", () => {
  test("GET /api/table/trades: the Arrow types of DESIGN.md §14 and each column's source_type", async () => {
    const doc = await (await fetch(`${server.url}/api/table/trades`)).json();
    const fields = doc.schema.fields.map((f: { name: string; data_type: string; nullable: boolean; metadata: Record<string, string> }) => [f.name, f.data_type, f.nullable, f.metadata.source_type]);
    expect(fields).toEqual([
      ["id", "Int64", false, "bigint"],
      ["at", "Timestamp<MICROSECOND, UTC>", true, "timestamp with time zone"],
      ["pair", "Utf8", false, "text"],
      ["price", "Decimal[12e+4]", true, "numeric(12,4)"],
      ["amount", "Float64", true, "double precision"],
      ["small", "Int16", true, "smallint"],
      ["qty", "Int32", true, "integer"],
      ["ratio", "Float32", true, "real"],
      ["tags", "List<Utf8>", true, "text[]"],
      ["raw", "Binary", true, "bytea"],
      ["ok", "Bool", true, "boolean"],
      ["day", "Date32<DAY>", true, "date"],
      ["meta", "Utf8", true, "jsonb"],
      ["ref", "Utf8", true, "uuid"],
    ]);
    expect(doc.schema.fields[3].metadata.description).toBe("Price in USD");
  });

  test("/metrics counts rows by source and engine", async () => {
    await (await get("SELECT id FROM swaps WHERE id <= 5")).arrayBuffer();
    await (await get("SELECT id FROM notes")).arrayBuffer();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/arrow402_source_rows_served_total\{source="warehouse",engine="postgres"\} \d+/);
    expect(text).toMatch(/arrow402_source_rows_served_total\{source="local",engine="sqlite"\} \d+/);
  });

  test("/readyz checks each source", async () => {
    const ready = await (await fetch(`${server.url}/readyz`)).json();
    expect(ready.checks).toMatchObject({ "database:local": "ok", "database:warehouse": "ok" });
  });
});

describe("exact values", () => {
  test("Arrow: every type as PostgreSQL holds it", async () => {
    const response = await get("SELECT * FROM trades ORDER BY id");
    expect(response.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    const first = table.get(0)!.toJSON();
    expect(table.getChild("id")!.toArray()).toEqual(new BigInt64Array([1n, 2n, 3n, 9223372036854775807n]));
    expect(first.at).toBe(Date.UTC(2024, 0, 2, 3, 4, 5, 123) + 0.456);
    expect(first.pair).toBe("ETH/USDC");
    expect(table.getChild("small")!.get(1)).toBe(-32768);
    expect(table.getChild("qty")!.get(1)).toBe(-2147483648);
    expect([...table.getChild("tags")!.get(0)!]).toEqual(["a", "b"]);
    expect([...table.getChild("tags")!.get(2)!]).toEqual([null, "z"]);
    expect([...table.getChild("raw")!.get(0)!]).toEqual([1, 2]);
    expect(table.getChild("ok")!.get(1)).toBe(false);
    expect(table.getChild("meta")!.get(0)).toBe('{"k": [1, 2]}');
    expect(table.getChild("ref")!.get(2)).toBe("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  });

  test.each([
    ["text/csv", "id,at,pair,price\r\n1,2024-01-02T03:04:05.123456Z,ETH/USDC,2345.6789\r\n2,1969-12-31T23:59:59.999999Z,btc/usdc,-0.0001\r\n"],
    ["application/json", '[\n{"id":1,"at":"2024-01-02T03:04:05.123456Z","pair":"ETH/USDC","price":"2345.6789"},\n{"id":2,"at":"1969-12-31T23:59:59.999999Z","pair":"btc/usdc","price":"-0.0001"}\n]\n'],
  ])("%s: decimals and µs timestamps exactly", async (accept, expected) => {
    const response = await get("SELECT id, at, pair, price FROM trades WHERE id < 3 ORDER BY id", accept);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(expected);
  });

  test("source: analytics.swaps_v2 is served as swaps", async () => {
    const response = await get("SELECT id, pair FROM swaps WHERE id > 47 ORDER BY id");
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(table.toArray().map((row) => row.pair)).toEqual(["p48", "p49", "p50"]);
  });

  test("a SQLite table beside them answers as before", async () => {
    const table = tableFromIPC(new Uint8Array(await (await get("SELECT body FROM notes")).arrayBuffer()));
    expect(table.getChild("body")!.get(0)).toBe("local");
  });
});

describe("the dialect, with SQLite's meaning", () => {
  test.each([
    ["text sorts by code point, NULLs first ascending", "SELECT pair FROM trades ORDER BY pair", ["ETH/USDC", "btc/usdc", "max", "Été"]],
    ["LIKE folds ASCII case only", "SELECT id FROM trades WHERE pair LIKE 'btc%' ORDER BY id", [2n]],
    ["integer division truncates", "SELECT id FROM trades WHERE id / 2 = 1 ORDER BY id", [2n, 3n]],
  ])("%s", async (_name, sql, expected) => {
    const response = await get(sql);
    expect(response.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(table.getChildAt(0)!.toArray().length === expected.length ? [...table.getChildAt(0)!] : []).toEqual(expected);
  });

  test("what PostgreSQL cannot run with SQLite's meaning is a 400 naming the construct and the engine", async () => {
    const response = await get("SELECT id FROM trades WHERE date('now') > day");
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/date\('now'\).*not available on tables served from PostgreSQL/);
  });
});

describe("reads stop on the server", () => {
  const running = async () =>
    Number((await admin`SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE 'COPY%' AND state <> 'idle' AND pid <> pg_backend_pid()`)[0].n);

  test("past query_timeout_ms: 400, and the statement is gone from the server", async () => {
    const response = await get(`SELECT id FROM big WHERE replace(replace(note, 'a', '${"a".repeat(30)}'), 'a', '${"a".repeat(31)}') LIKE '%zz%'`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(`longer than the ${TIME_LIMIT_MS} ms limit`);
    for (let i = 0; i < 50 && (await running()) > 0; i++) await Bun.sleep(100);
    expect(await running()).toBe(0);
  });

  test("a client that goes away mid-export: the COPY is cancelled on the server", async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent("SELECT id, note FROM big")}`, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    for (let i = 0; i < 50 && (await running()) > 0; i++) await Bun.sleep(100);
    expect(await running()).toBe(0);
  });
});
