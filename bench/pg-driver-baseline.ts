/**
 * Item 7's in-process driver figures, in a fresh process of its own (so the bench process's heap
 * does not weigh on it): Bun.SQL reading the export's rows (`.values()`, the driver's own rows),
 * and draining the same `COPY (…) TO STDOUT (FORMAT binary)` arrow402 decodes through `readable()`
 * (bytes only, nothing decoded). One unmeasured read of each warms the process.
 *
 *   bun bench/pg-driver-baseline.ts URL SELECT   →   {"valuesMs":…, "rows":…, "copyMs":…, "copyBytes":…}
 */
import { SQL } from "bun";

const [url, select] = process.argv.slice(2);
if (select === undefined) throw new Error("usage: bun bench/pg-driver-baseline.ts URL SELECT");
const sql = new SQL(url!, { max: 1 });

async function values(): Promise<{ ms: number; rows: number }> {
  Bun.gc(true);
  const start = performance.now();
  const rows = (await sql.unsafe(select!).values()) as unknown[][];
  return { ms: performance.now() - start, rows: rows.length };
}

async function copy(): Promise<{ ms: number; bytes: number }> {
  Bun.gc(true);
  const start = performance.now();
  let bytes = 0;
  for await (const chunk of sql.unsafe(`COPY (${select}) TO STDOUT (FORMAT binary)`).readable()) bytes += chunk.byteLength;
  return { ms: performance.now() - start, bytes };
}

await copy();
const copied = await copy();
await values();
const read = await values();
await sql.close();
console.log(JSON.stringify({ valuesMs: read.ms, rows: read.rows, copyMs: copied.ms, copyBytes: copied.bytes }));
