/**
 * The exports' baseline (item 2) in a process of its own: `db.query(sql).values()` of the query, timed after
 * one unmeasured scan, in a fresh heap (the benchmark process's heap fills with decoded tables,
 * which would slow a scan run there and flatter the ratio). Prints the milliseconds.
 *
 *   bun bench/scan-baseline.ts DB_PATH SQL
 */
import { Database } from "bun:sqlite";

const [path, sql] = process.argv.slice(2);
if (path === undefined || sql === undefined) throw new Error("usage: bun bench/scan-baseline.ts DB_PATH SQL");
const db = new Database(path, { readonly: true });
db.query(sql).values();
Bun.gc(true);
const start = performance.now();
const rows = db.query(sql).values().length;
const ms = performance.now() - start;
console.log(JSON.stringify({ ms, rows }));
