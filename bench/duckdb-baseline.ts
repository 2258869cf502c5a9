/**
 * Item 8's baseline in a process of its own: DuckDB (`@duckdb/node-api`) reading the same rows in
 * process into JavaScript values, timed after one unmeasured read, in a fresh heap (as
 * scan-baseline.ts does for bun:sqlite). The Parquet files are a view named as arrow402's table,
 * so the SQL is the same text. Prints the milliseconds and the rows.
 *
 *   bun bench/duckdb-baseline.ts GLOB TABLE SQL [read-all|stream]
 *
 * read-all (the baseline): `connection.runAndReadAll(sql)` then `reader.getRows()`: every value
 * as the driver's JavaScript value (BIGINT a bigint, TIMESTAMP a DuckDBTimestampValue, VARCHAR a
 * string, DOUBLE a number, NULL null). stream (listed for comparison): what the engine does,
 * `connection.stream(sql)` then `result.fetchChunk()` and `chunk.getRows()` chunk by chunk.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";

const [glob, table, sql, mode = "read-all"] = process.argv.slice(2);
if (glob === undefined || table === undefined || sql === undefined) throw new Error("usage: bun bench/duckdb-baseline.ts GLOB TABLE SQL [read-all|stream]");

async function readRows(connection: DuckDBConnection): Promise<number> {
  if (mode === "read-all") return (await connection.runAndReadAll(sql!)).getRows().length;
  const result = await connection.stream(sql!);
  let rows = 0;
  for (;;) {
    const chunk = await result.fetchChunk();
    if (chunk === null || chunk.rowCount === 0) return rows;
    rows += chunk.getRows().length;
  }
}

const instance = await DuckDBInstance.create(":memory:");
const connection = await instance.connect();
await connection.run(`CREATE VIEW ${table} AS SELECT * FROM read_parquet('${glob.replaceAll("'", "''")}')`);
await readRows(connection);
Bun.gc(true);
const start = performance.now();
const rows = await readRows(connection);
const ms = performance.now() - start;
connection.closeSync();
instance.closeSync();
console.log(JSON.stringify({ ms, rows }));
