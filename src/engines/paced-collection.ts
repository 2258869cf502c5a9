/**
 * Collections paced by the bytes engines read (BENCHMARKS.md items 7 and 8, memory). A long read
 * drops what it has decoded and sent batch after batch, and JavaScriptCore collects when its own
 * heuristics say so, not when the process's memory grows:
 * - DuckDB: a chunk's vectors live in native memory that only its finalizer frees (`reset()` keeps
 *   them, the driver has no call that frees a chunk), memory JavaScriptCore does not count. Left to
 *   itself, a fresh server's 1M-row Parquet export peaked ~200 MB over its idle RSS, most of it
 *   chunks already sent.
 * - PostgreSQL: the COPY stream's chunks and the batches decoded from them are garbage once sent;
 *   a 1M-row export's peak growth was 49–87 MB, and each fresh buffer's pages were faulted in anew.
 *   Collected every 4 MiB of the stream, it peaks ~31 MB and the export takes ~0.85× the time
 *   (freed pages are reused, not faulted in).
 * After every COLLECT_AFTER_BYTES read, what is read but not yet collected stays within about that.
 * Most of it died young (a chunk decoded, a batch sent), so an eden collection frees it at a
 * fraction of a full one's cost; what was still in flight at a collection (a batch being sent)
 * survives it into the old generation, which only a full collection frees, so every
 * FULL_EVERY-th collection is a full one. A/B against a full collection every time (BENCHMARKS.md,
 * "eden collections between full ones"): the PostgreSQL export 0.86–0.90× the time at the same
 * ~31 MB peak, the DuckDB export ~0.8×. One full in four was as fast but let a wide-text export's
 * peak grow 35–47 → 54–65 MB (45–55 with one in two); eden only, 45–48 MB on the narrow export;
 * eden every 1 or 2 MiB promoted more and peaked higher.
 *
 * The budget is the process's, not a read's: concurrent reads share it, so collections follow the
 * bytes read, not the number of reads, and a read that returns few rows (a quote reads none) seldom
 * spends it. `fullGC` and `edenGC` from bun:jsc are synchronous collections that keep compiled
 * code (`Bun.gc(true)` also throws it away: the DuckDB export took 2–3× as long).
 */
import { edenGC, fullGC } from "bun:jsc";

/** The bytes read, by all reads together, between two collections. */
export const COLLECT_AFTER_BYTES = 4 * 1024 * 1024;

/** One collection in this many is a full one; the others are eden collections. */
export const FULL_EVERY = 2;

let readSinceCollection = 0;
let collections = 0;

/** Counts `bytes` just read by an engine; collects once the budget is spent. */
export function bytesRead(bytes: number): void {
  readSinceCollection += bytes;
  if (readSinceCollection < COLLECT_AFTER_BYTES) return;
  readSinceCollection = 0;
  collections++;
  if (collections % FULL_EVERY === 0) fullGC();
  else edenGC();
}

/** How many collections the budget has run in this process (for tests). */
export function pacedCollections(): number {
  return collections;
}
