/**
 * Arrow answers of DuckDB tables through the real listening server (engines/duckdb/arrow-chunks.ts):
 * an Arrow answer is encoded from DuckDB's vectors, every other format from values; both are the
 * same rows, and the Arrow body after its schema is byte for byte what the Arrow encoder makes of
 * the values the values path reads (so a replay's digest does not depend on the path). A value no
 * Arrow type holds is still a 500 naming table, column and row.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DuckDBInstance } from "@duckdb/node-api";
import { tableFromIPC } from "apache-arrow";
import { join } from "node:path";
import { createStreamEncoder, type EncoderColumn } from "../../src/arrow/encode.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { openDuckRead } from "../../src/engines/duckdb/read.ts";
import type { DuckColumnType } from "../../src/engines/duckdb/types.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { tempDir } from "../support/fixtures.ts";

let server: RunningServer;
let reader: DuckDBInstance;
let parquet: string;

const COLUMNS: [name: string, kind: DuckColumnType["kind"]][] = [
  ["id", "int64"],
  ["qty", "int32"],
  ["small", "int16"],
  ["ratio", "float32"],
  ["amount", "float64"],
  ["day", "date32"],
  ["seen", "timestamp_us"],
  ["at", "timestamp_us_utc"],
  ["ok", "bool"],
  ["address", "utf8"],
];

beforeAll(async () => {
  const dir = tempDir();
  parquet = join(dir, "transfers.parquet");
  reader = await DuckDBInstance.create(":memory:");
  const writer = await reader.connect();
  await writer.run(`
    COPY (
      SELECT g::BIGINT AS id,
             CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 7919) % 2147483647 END::INTEGER AS qty,
             CASE WHEN g % 7 = 0 THEN NULL ELSE g % 32768 END::SMALLINT AS small,
             CASE WHEN g % 5 = 0 THEN NULL ELSE g / 3.0 END::FLOAT AS ratio,
             CASE WHEN g % 10 = 0 THEN NULL ELSE g / 7.0 END::DOUBLE AS amount,
             DATE '1969-12-25' + (g % 4000)::INTEGER AS day,
             CASE WHEN g % 9 = 0 THEN NULL ELSE TIMESTAMP '2024-01-01' + to_microseconds(g * 1000001) END AS seen,
             TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_microseconds(g * 999999) AS "at",
             CASE WHEN g % 4 = 0 THEN NULL ELSE g % 3 = 0 END AS ok,
             CASE WHEN g % 13 = 0 THEN NULL WHEN g % 17 = 0 THEN 'Été ☃ 😀' WHEN g % 19 = 0 THEN '' ELSE '0x' || md5(g::VARCHAR) || left(md5((-g)::VARCHAR), 8) END AS address
      FROM range(1, 12001) r(g)
    ) TO '${parquet}' (FORMAT parquet)`);
  writer.closeSync();
  const config = resolveConfig(
    {
      server: { bind: "127.0.0.1:0" },
      databases: { lake: { duckdb: ":memory:" } },
      tables: [{ name: "transfers", files: "./transfers.parquet" }],
    },
    { baseDir: dir, env: {} },
  );
  server = await startServer(config, { workers: 2 });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  reader?.closeSync();
});

const get = (sql: string, accept = "application/vnd.apache.arrow.stream") =>
  fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers: { accept, "accept-encoding": "identity" } });

/** An Arrow stream without its schema message (continuation marker, length, metadata padded to 8). */
function afterSchema(stream: Uint8Array): Uint8Array {
  const length = new DataView(stream.buffer, stream.byteOffset).getInt32(4, true);
  return stream.subarray(8 + length);
}

/** The select's batches by the values path (values.ts then the Arrow encoder), read on a DuckDB of the test's own, then the end of stream. */
async function valuesPath(select: string, names: string[]): Promise<Uint8Array> {
  const kinds = names.map((name) => COLUMNS.find((c) => c[0] === name)![1]);
  const encoder = names.map((name, i) => ({ name, kind: kinds[i], nullable: true }) as EncoderColumn);
  const stream = createStreamEncoder(encoder);
  const read = await openDuckRead(reader, { select, types: kinds.map((kind) => ({ kind }) as DuckColumnType), count: null, timeoutMs: 30_000 });
  const messages: Uint8Array[] = [];
  for await (const batch of read.batches) messages.push(stream.batchMessage(batch.rows, batch.firstRowIndex));
  messages.push(stream.endMessage());
  return Buffer.concat(messages);
}

describe("an Arrow answer, from DuckDB's vectors", () => {
  test.each([
    ["every column, 12,000 rows", COLUMNS.map((c) => c[0]), ""],
    ["text and booleans", ["address", "ok", "id"], ""],
    ["the first 10 rows", COLUMNS.map((c) => c[0]), " LIMIT 10"],
  ])("%s: the values path's bytes after the schema", async (_, names, tail) => {
    const response = await get(`SELECT ${names.join(", ")} FROM transfers${tail}`);
    expect(response.status).toBe(200);
    const body = new Uint8Array(await response.arrayBuffer());
    const expected = await valuesPath(`SELECT ${names.map((n) => `"${n}"`).join(", ")} FROM read_parquet('${parquet}')${tail}`, names);
    expect(Buffer.from(afterSchema(body)).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
  }, 60_000);

  test("the same rows as the JSON answer (values path), value by value", async () => {
    const sql = "SELECT id, qty, ratio, amount, ok, address FROM transfers WHERE id % 101 = 0";
    const table = tableFromIPC(new Uint8Array(await (await get(sql)).arrayBuffer()));
    const json = (await (await get(sql, "application/json")).json()) as { rows?: unknown[][] } | Record<string, unknown>[];
    const rows = Array.isArray(json) ? json : (json.rows as unknown[]);
    expect(table.numRows).toBe(118);
    expect(rows.length).toBe(118);
    const arrowRows = table.toArray().map((row): Record<string, unknown> => ({ ...row.toJSON(), id: String(row.id) }));
    const jsonRows = (rows as Record<string, unknown>[]).map((row): Record<string, unknown> => ({ ...row, id: String(row.id) }));
    expect(arrowRows.map((r) => [r.id, r.qty, r.ok, r.address])).toEqual(jsonRows.map((r) => [r.id, r.qty, r.ok, r.address]));
    for (let i = 0; i < arrowRows.length; i++) {
      expect(arrowRows[i]!.amount).toBe(jsonRows[i]!.amount as number | null);
      expect(arrowRows[i]!.ratio === null ? null : Math.fround(arrowRows[i]!.ratio as number)).toBe(jsonRows[i]!.ratio === null ? null : Math.fround(jsonRows[i]!.ratio as number));
    }
  });
});
