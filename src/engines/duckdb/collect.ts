/**
 * Collections paced by the DuckDB chunks read (BENCHMARKS.md item 8, memory). A chunk's vectors
 * live in native memory that only its finalizer frees (`reset()` keeps them, the driver has no call
 * that frees a chunk), and JavaScriptCore does not count that memory when it decides to collect:
 * a chunk read and dropped waits for a collection that its own allocation never asks for. Left to
 * itself, a fresh server's 1M-row Parquet export peaked ~200 MB over its idle RSS, most of it
 * chunks already sent; with a full collection after every COLLECT_AFTER_BYTES of chunks read, the
 * chunks in memory at once stay within about that.
 *
 * The budget is the process's, not a read's: concurrent reads share it, so collections follow the
 * bytes read, not the number of reads. `fullGC` from bun:jsc is a synchronous full collection that
 * keeps compiled code (`Bun.gc(true)` also throws it away: the export took 2–3× as long).
 */
import { fullGC } from "bun:jsc";

/** The estimated chunk bytes read, by all reads together, between two collections. */
export const COLLECT_AFTER_BYTES = 4 * 1024 * 1024;

/**
 * A DuckDB vector's bytes per row, counted alike for every type: 8 for a number or a date, a
 * string's 16-byte header and its text beyond 12 bytes; 16 on average is close enough to pace by.
 */
const BYTES_PER_VALUE = 16;

let readSinceCollection = 0;

/** Counts a chunk of `rows` rows of `columns` columns just read; collects once the budget is spent. */
export function chunkRead(rows: number, columns: number): void {
  readSinceCollection += rows * Math.max(columns, 1) * BYTES_PER_VALUE;
  if (readSinceCollection < COLLECT_AFTER_BYTES) return;
  readSinceCollection = 0;
  fullGC();
}
