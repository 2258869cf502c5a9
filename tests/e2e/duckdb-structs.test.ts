/**
 * DuckDB STRUCT columns (DESIGN.md §14: "LIST/STRUCT → List/Struct") through the real listening
 * server, from a Parquet file DuckDB writes in the test: the Arrow types with a child field per
 * member and DuckDB's declared source_type, exact values at every level (NULL structs, NULL
 * members, structs of lists and of structs, lists of structs, int64 beyond 2^53) in Arrow, CSV,
 * JSON and Parquet, filtered by a WHERE on another column; a MAP stays the Utf8 of its text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC, type Field, type Table } from "apache-arrow";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/load.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { decodedValues } from "../arrow/kind-cases.ts";
import { readParquetIndependently } from "../formats/support.ts";
import { tempDir } from "../support/fixtures.ts";

let server: RunningServer;

const S_TYPE = "STRUCT(a INTEGER, \"name\" VARCHAR, big BIGINT, price DECIMAL(10,2), tags VARCHAR[], \"inner\" STRUCT(x DOUBLE, \"at\" TIMESTAMP WITH TIME ZONE))";

beforeAll(async () => {
  const dir = tempDir();
  const duck = await DuckDBInstance.create(":memory:");
  const writer = await duck.connect();
  await writer.run(`
    SET TimeZone = 'UTC';
    CREATE TABLE nested (id BIGINT, kind VARCHAR, s ${S_TYPE}, items STRUCT(k VARCHAR, n BIGINT)[], m MAP(VARCHAR, INTEGER));
    INSERT INTO nested VALUES
      (1, 'a', {'a': 1, 'name': 'x,"y"', 'big': 9007199254740993, 'price': 12.34, 'tags': ['p', NULL], 'inner': {'x': 2.5, 'at': '2024-01-02 03:04:05.123456+00'}}, [{'k': 'u', 'n': -9223372036854775808}, NULL, {'k': NULL, 'n': NULL}], MAP {'m': 1}),
      (2, 'b', {'a': 2, 'name': 'no', 'big': 0, 'price': 0, 'tags': [], 'inner': NULL}, [], NULL),
      (3, 'a', NULL, NULL, NULL),
      (4, 'a', {'a': NULL, 'name': NULL, 'big': NULL, 'price': NULL, 'tags': NULL, 'inner': {'x': NULL, 'at': NULL}}, [], MAP {});
    COPY nested TO '${join(dir, "nested.parquet")}' (FORMAT parquet);
  `);
  writer.closeSync();
  duck.closeSync();
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0" },
      databases: { files: { duckdb: ":memory:" } },
      tables: [{ name: "nested", database: "files", files: "./nested.parquet" }],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config, { workers: 1 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

const get = (sql: string, accept?: string) => fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, accept === undefined ? {} : { headers: { accept } });
const QUERY = "SELECT id, s, items, m FROM nested WHERE kind = 'a' ORDER BY id";

/** Rows 1, 3 and 4 (kind 'a') as an Arrow reader decodes them (tests/arrow/kind-cases.ts `Decoded`). */
const S = [
  { a: 1, name: 'x,"y"', big: 9_007_199_254_740_993n, price: 1234n, tags: ["p", null], inner: { x: "2.5", at: 1_704_164_645_123_456n } },
  null,
  { a: null, name: null, big: null, price: null, tags: null, inner: { x: null, at: null } },
];
const ITEMS = [[{ k: "u", n: -(2n ** 63n) }, null, { k: null, n: null }], null, []];

function expectValues(table: Table): void {
  expect(decodedValues(table, 0)).toEqual([1n, 3n, 4n]);
  expect(decodedValues(table, 1)).toEqual(S);
  expect(decodedValues(table, 2)).toEqual(ITEMS);
  expect(decodedValues(table, 3)).toEqual(["{m=1}", null, "{}"]);
}

describe("STRUCT columns", () => {
  test("GET /api/table/nested: Struct with a nullable child per member, nested as declared; source_type is DuckDB's; MAP is Utf8", async () => {
    const doc = await (await fetch(`${server.url}/api/table/nested`)).json();
    const fields = doc.schema.fields.map((f: { name: string; data_type: string; metadata: Record<string, string> }) => [f.name, f.data_type, f.metadata.source_type]);
    expect(fields).toEqual([
      ["id", "Int64", "BIGINT"],
      ["kind", "Utf8", "VARCHAR"],
      ["s", "Struct<{a:Int32, name:Utf8, big:Int64, price:Decimal[10e+2], tags:List<Utf8>, inner:Struct<{x:Float64, at:Timestamp<MICROSECOND, UTC>}>}>", S_TYPE],
      ["items", "List<Struct<{k:Utf8, n:Int64}>>", "STRUCT(k VARCHAR, n BIGINT)[]"],
      ["m", "Utf8", "MAP(VARCHAR, INTEGER)"],
    ]);
  });

  test("Arrow: every member exactly, NULL at each level, filtered by a WHERE on another column", async () => {
    const response = await get(QUERY);
    expect(response.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
    expect(String(table.schema.fields[1]!.type)).toStartWith("Struct<{a:Int32, name:Utf8");
    expect(table.schema.fields[1]!.type.children.every((field: Field) => field.nullable)).toBe(true);
    expectValues(table);
  });

  test("Parquet: the same values, read by another reader", async () => {
    const response = await get(QUERY, "application/vnd.apache.parquet");
    expect(response.status).toBe(200);
    expectValues(readParquetIndependently(new Uint8Array(await response.arrayBuffer())));
  });

  test.each([
    [
      "text/csv",
      "id,s,items,m\r\n" +
        `1,"{""a"":1,""name"":""x,\\""y\\"""",""big"":""9007199254740993"",""price"":""12.34"",""tags"":[""p"",null],""inner"":{""x"":2.5,""at"":""2024-01-02T03:04:05.123456Z""}}","[{""k"":""u"",""n"":""-9223372036854775808""},null,{""k"":null,""n"":null}]",{m=1}\r\n` +
        "3,,,\r\n" +
        `4,"{""a"":null,""name"":null,""big"":null,""price"":null,""tags"":null,""inner"":{""x"":null,""at"":null}}",[],{}\r\n`,
    ],
    [
      "application/json",
      "[\n" +
        `{"id":1,"s":{"a":1,"name":"x,\\"y\\"","big":"9007199254740993","price":"12.34","tags":["p",null],"inner":{"x":2.5,"at":"2024-01-02T03:04:05.123456Z"}},"items":[{"k":"u","n":"-9223372036854775808"},null,{"k":null,"n":null}],"m":"{m=1}"},\n` +
        `{"id":3,"s":null,"items":null,"m":null},\n` +
        `{"id":4,"s":{"a":null,"name":null,"big":null,"price":null,"tags":null,"inner":{"x":null,"at":null}},"items":[],"m":"{}"}\n` +
        "]\n",
    ],
  ])("%s: a struct is its JSON object (int64 beyond 2^53 a string, decimals exact strings)", async (accept, expected) => {
    const response = await get(QUERY, accept);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(expected);
  });

  test("a struct column is selected, not compared: WHERE on it is a 400 naming the column, its type and what to do", async () => {
    const response = await get("SELECT id FROM nested WHERE s IS NULL");
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toContain(`Column "s" of type ${S_TYPE} in WHERE`);
    expect(text).toContain("filter on the client");
  });

  test("nor sorted: ORDER BY it is a 400 naming the column and its type", async () => {
    const response = await get("SELECT id FROM nested ORDER BY s");
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(`ORDER BY "s" (type ${S_TYPE})`);
  });
});
