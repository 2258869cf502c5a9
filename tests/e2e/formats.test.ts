/**
 * Output formats and compression through the real server (ARCHITECTURE.md §13): the same rows in Arrow,
 * CSV, JSON, NDJSON and Parquet, chosen by `Accept` or `?format=`; int64 exact in the text
 * formats; Parquet read back by an independent reader; 406 for what cannot be served; zstd and
 * gzip as Content-Encoding, streamed; the paid resource is the same whatever the format.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { startServer, type RunningServer } from "../../src/server.ts";
import { canonicalFromArrow, canonicalFromText, columnsOf, expectedRows, parseCsv, parseJsonExact, readParquetIndependently, readRows, type Canonical } from "../formats/support.ts";
import { createTypesDatabase, PAY_TO, tempDir, typesConfig } from "../support/fixtures.ts";

let server: RunningServer;
let path: string;

beforeAll(async () => {
  const dir = tempDir();
  path = join(dir, "types.sqlite");
  createTypesDatabase(path);
  const db = new Database(path);
  db.run("CREATE TABLE series (id INTEGER PRIMARY KEY, value REAL, note TEXT)");
  db.run("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000) INSERT INTO series SELECT x, x / 7.0, 'row ' || x FROM c");
  db.close();
  const perRow = { type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.001" };
  const tables = [{ name: "kinds" }, { name: "series" }, { name: "items", price_tags: [perRow] }];
  server = await startServer(typesConfig(dir, { tables }), { workers: 2 });
});
afterAll(() => server.stop());

const SQL = "SELECT * FROM kinds ORDER BY id";
const get = (query: string, headers: Record<string, string> = {}) => fetch(`${server.url}/api/query?${query}`, { headers, decompress: false } as RequestInit);
const q = (sql: string) => `query=${encodeURIComponent(sql)}`;

/** What SQLite holds, in the canonical form of each column's kind. */
function expected(): Canonical[][] {
  const columns = columnsOf(path, "kinds");
  const { rows, rowKeys } = readRows(path, SQL);
  return expectedRows(columns, rows, rowKeys);
}

/** A response body, in any format, as canonical rows. */
async function rowsOf(format: string, body: Uint8Array): Promise<Canonical[][]> {
  const kinds = columnsOf(path, "kinds").map((c) => c.kind);
  const text = () => new TextDecoder().decode(body);
  if (format === "arrow" || format === "parquet") {
    const table = format === "arrow" ? tableFromIPC(body) : readParquetIndependently(body);
    return table.toArray().map((row) => kinds.map((kind, c) => canonicalFromArrow(kind, row[table.schema.fields[c]!.name])));
  }
  if (format === "csv") return parseCsv(text()).slice(1).map((r) => kinds.map((kind, c) => canonicalFromText(kind, r[c] ?? null)));
  const lines = text().split("\n").filter((line) => line !== "");
  const objects = format === "json" ? (parseJsonExact(text()) as Record<string, unknown>[]) : lines.map((line) => parseJsonExact(line) as Record<string, unknown>);
  return objects.map((o) => kinds.map((kind, c) => canonicalFromText(kind, Object.values(o)[c] ?? null)));
}

const FORMATS: [string, string, string][] = [
  ["arrow", "application/vnd.apache.arrow.stream", "application/vnd.apache.arrow.stream"],
  ["csv", "text/csv", "text/csv; charset=utf-8; header=present"],
  ["json", "application/json", "application/json"],
  ["ndjson", "application/x-ndjson", "application/x-ndjson"],
  ["parquet", "application/vnd.apache.parquet", "application/vnd.apache.parquet"],
];

describe("the same rows in every format", () => {
  test.each(FORMATS)("%s by Accept and by ?format=", async (name, accept, contentType) => {
    for (const response of [await get(q(SQL), { accept }), await get(`${q(SQL)}&format=${name}`)]) {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(contentType);
      expect(response.headers.get("vary")).toContain("Accept");
      expect(await rowsOf(name, new Uint8Array(await response.arrayBuffer()))).toEqual(expected());
    }
  });

  test("int64 beyond 2^53 keeps every digit in the text formats: bare in CSV, a string in JSON", async () => {
    const csv = await (await get(`${q("SELECT big FROM kinds WHERE id IN (1, 2, 4) ORDER BY id")}&format=csv`)).text();
    expect(csv).toBe("big\r\n9007199254740993\r\n-9223372036854775808\r\n9223372036854775807\r\n");
    const json = await (await get(`${q("SELECT big FROM kinds WHERE id = 4")}&format=json`)).text();
    expect(JSON.parse(json)).toEqual([{ big: "9223372036854775807" }]);
  });

  test.each(FORMATS)("an empty result is a valid %s document with no rows", async (name) => {
    const response = await get(`${q("SELECT * FROM kinds WHERE id < 0")}&format=${name}`);
    expect(response.status).toBe(200);
    expect(await rowsOf(name, new Uint8Array(await response.arrayBuffer()))).toEqual([]);
  });

  test.each(FORMATS)("a 50,000-row export streams in %s", async (name) => {
    const response = await get(`${q("SELECT * FROM series")}&format=${name}`);
    expect(response.status).toBe(200);
    const body = new Uint8Array(await response.arrayBuffer());
    if (name === "arrow" || name === "parquet") {
      const table = name === "arrow" ? tableFromIPC(body) : readParquetIndependently(body);
      expect(table.numRows).toBe(50_000);
      expect(table.getChild("note")!.get(49_999)).toBe("row 50000");
    } else {
      const text = new TextDecoder().decode(body);
      expect(text.trim().split("\n").length).toBe(name === "json" ? 50_000 + 2 : name === "csv" ? 50_001 : 50_000);
      expect(text).toContain("row 50000");
    }
  });

  test.each([
    ["Accept: image/png", { accept: "image/png" }, ""],
    ["?format=xlsx", {}, "&format=xlsx"],
    ["Accept with every format refused", { accept: "*/*;q=0" }, ""],
  ])("%s: 406 naming the formats", async (_name, headers, extra) => {
    const response = await get(`${q(SQL)}${extra}`, headers as Record<string, string>);
    expect(response.status).toBe(406);
    expect(response.headers.get("content-type")).toStartWith("text/plain");
    expect(await response.text()).toContain("text/csv");
  });

  test("a paid table quotes the same price whatever the format; the paid resource leaves `format` out", async () => {
    const arrow = await (await get(q("SELECT * FROM items WHERE id <= 5"))).json();
    const csv = await (await get(`${q("SELECT * FROM items WHERE id <= 5")}&format=csv`)).json();
    expect(csv.accepts).toEqual(arrow.accepts);
    expect(csv.resource.url).toBe(arrow.resource.url);
    expect(csv.resource.mimeType).toBe("text/csv");
  });
});

describe("compression", () => {
  const series = `${q("SELECT * FROM series WHERE id <= 2000")}&format=csv`;
  test.each([
    ["zstd", "zstd", (b: Uint8Array) => Bun.zstdDecompressSync(b)],
    ["gzip", "gzip", (b: Uint8Array) => gunzipSync(b)],
    ["zstd preferred at equal q", "gzip, zstd", (b: Uint8Array) => Bun.zstdDecompressSync(b)],
    ["gzip when zstd is refused", "zstd;q=0, gzip", (b: Uint8Array) => gunzipSync(b)],
  ])("%s", async (_name, acceptEncoding, decompress) => {
    const plain = new Uint8Array(await (await get(series)).arrayBuffer());
    const response = await get(series, { "accept-encoding": acceptEncoding });
    expect(response.headers.get("content-encoding")).toBe(acceptEncoding.startsWith("zstd;q=0") ? "gzip" : acceptEncoding.includes("zstd") ? "zstd" : "gzip");
    const compressed = new Uint8Array(await response.arrayBuffer());
    expect(compressed.byteLength).toBeLessThan(plain.byteLength / 2);
    expect(new Uint8Array(decompress(compressed))).toEqual(plain);
  });

  test("a large streamed export is compressed as it is written", async () => {
    const response = await get(q("SELECT * FROM series"), { "accept-encoding": "zstd" });
    expect(response.headers.get("content-encoding")).toBe("zstd");
    expect(tableFromIPC(Bun.zstdDecompressSync(new Uint8Array(await response.arrayBuffer()))).numRows).toBe(50_000);
  });

  test("small bodies and clients that ask for nothing are sent as they are", async () => {
    const tiny = await get(q("SELECT id FROM kinds WHERE id = 1"), { "accept-encoding": "zstd" });
    expect(tiny.headers.get("content-encoding")).toBeNull();
    const none = await get(`${q("SELECT * FROM kinds")}&format=csv`);
    expect(none.headers.get("content-encoding")).toBeNull();
  });
});
