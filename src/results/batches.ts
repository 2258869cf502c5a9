/**
 * The sizes every engine's results are cut to (ARCHITECTURE.md §11 "wide rows"): how many rows and
 * bytes a record batch holds, when a response starts, and how far a producer may run ahead of its
 * client. One set for every engine, so a response holds a few batches whatever its rows' width.
 */

/**
 * Rows per record batch. Small enough that a batch's row objects die young in the worker's heap,
 * large enough that per-message costs stay negligible (a message per 4,096 rows is ~250 for 1M rows).
 * The one-worker SQLite read of 1M rows (ARCHITECTURE.md §11), its loop alone in a process
 * (bun:sqlite `iterate()` + the Arrow encoder): 16,384-row batches peaked at +114 MB (`transfers`)
 * and +156 MB (`wide_transfers`, a 66-char text more), 4,096-row ones at +57 and +70 MB, and took
 * ~0.6× the time; 64k-row batches were slower still (~2× the peak memory of 16k).
 */
export const BATCH_ROWS = 4_096;
/**
 * A batch also ends once its text and blob values hold this many characters and bytes: rows of
 * 100 KB would otherwise make a 1.6 GB batch, held in the worker and then in the response.
 */
export const BATCH_MAX_BYTES = 4 * 1024 * 1024;
/**
 * And at most this many values (rows × columns): BATCH_ROWS rows of up to 64 columns. A select
 * list may name a column many times under aliases; 16,384 rows of 1,500 columns took 2–8 GB.
 */
export const BATCH_MAX_CELLS = 64 * BATCH_ROWS;

/** Rows per batch for a result of `columns` columns (BATCH_ROWS, fewer for a wide select list). */
export function batchRowsFor(columns: number): number {
  return Math.max(1, Math.min(BATCH_ROWS, Math.floor(BATCH_MAX_CELLS / Math.max(1, columns))));
}

/**
 * The response starts (200 and headers) once this many rows are encoded, or the result ended:
 * an error in the first 32,768 rows (a value that does not fit, an SQLite error) is still a proper
 * 4xx/5xx response rather than a cut stream.
 */
export const FIRST_RESPONSE_ROWS = 32_768;
/** Or once this many bytes are encoded: wide rows start their response as soon as narrow ones do. */
export const FIRST_RESPONSE_BYTES = 2 * BATCH_MAX_BYTES;

/**
 * Chunks the worker may send ahead before it waits for the HTTP thread (back-pressure). More than
 * the schema plus the full batches of FIRST_RESPONSE_ROWS, which are all sent before anything is
 * read; batches cut short by BATCH_MAX_BYTES or BATCH_MAX_CELLS may reach this first, and then the
 * response starts (execute.ts `RunningQuery`).
 */
export const MAX_IN_FLIGHT = 2 + FIRST_RESPONSE_ROWS / BATCH_ROWS;

