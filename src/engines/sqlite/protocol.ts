/**
 * Messages between the HTTP thread (results/executor.ts) and a query worker (engines/sqlite/worker.ts).
 * Arrow bytes travel as transferred ArrayBuffers: moved, not copied.
 */
import type { EncoderColumn } from "../../arrow/encode.ts";
import type { ValidatedQuery } from "../../sql/dialect.ts";

/** The Arrow columns of a query's result, as the encoder takes them. */
/**
 * A row's values as the byte bounds of a read count them (inline.ts INLINE_MAX_BYTES,
 * RunJob.maxBytes): characters of text, bytes of blobs, 8 for a number (as in Arrow), 1 for a
 * boolean, 0 for NULL: never more than encoding them adds. Numbers count too: a select list of
 * 1,500 timestamp columns makes wide rows without a single text.
 */
export function bytesOfValues(values: readonly unknown[]): number {
  let bytes = 0;
  for (const value of values) {
    if (typeof value === "string") bytes += value.length;
    else if (typeof value === "number" || typeof value === "bigint") bytes += 8;
    else if (value instanceof Uint8Array) bytes += value.byteLength;
    else if (typeof value === "boolean") bytes += 1;
  }
  return bytes;
}

export { encoderColumns } from "../../sql/validated.ts";

export { BATCH_MAX_BYTES, BATCH_MAX_CELLS, BATCH_ROWS, batchRowsFor, FIRST_RESPONSE_BYTES, FIRST_RESPONSE_ROWS, MAX_IN_FLIGHT } from "../../results/batches.ts";

export interface RunJob {
  type: "run";
  id: number;
  sql: string;
  /**
   * The query's row count, for an exact figure when a result over maxRows is refused; null when a
   * LIMIT within maxRows already bounds the result. Runs in the scan's read transaction.
   */
  countSql: string | null;
  /**
   * Count before the scan, so an oversized result is refused before any byte is sent. False when
   * the caller keeps the whole result before answering (paid queries): the scan finds the excess.
   */
  countFirst: boolean;
  /** A cheap upper bound of the row count (the table's rowid span); within maxRows, no count is needed. */
  boundSql: string | null;
  table: string;
  columns: EncoderColumn[];
  /** The output format's name (formats/registry.ts). */
  format: string;
  maxRows: number;
  batchRows: number;
  /**
   * A transport's cap on the answer (MCP): the read stops once its rows hold more than this many
   * characters of text and bytes of blobs (fewer than the encoded result's bytes); null: none.
   */
  maxBytes: number | null;
  /** Read numbers without safeIntegers first, exactly again from a batch that needs it (worker.ts `fastReader`). */
  fastNumbers: boolean;
}

export interface CountJob {
  type: "count";
  id: number;
  sql: string;
}

export type ToWorker =
  /** `stop`: an Int32Array's SharedArrayBuffer; non-zero means "abandon the running statement" (engines/sqlite/guard.ts). */
  | { type: "open"; path: string; busyTimeoutMs: number; stop: SharedArrayBuffer }
  | RunJob
  | CountJob
  /** Flow control: the HTTP thread has consumed one more `chunk` message. */
  | { type: "ack"; id: number }
  /** The job is no longer wanted (its client went away): end it and its read transaction, then answer `stopped`. */
  | { type: "stop"; id: number }
  /** Answer to `misfit`: the query with the rowid appended (null when the table has none). */
  | { type: "rowid-sql"; id: number; sql: string | null };

export type FromWorker =
  /** Consecutive IPC messages (the schema travels with the first batch), `rows` in them. */
  | { type: "chunk"; id: number; bytes: Uint8Array[]; rows: number }
  /** The end: the last messages (last batch, end-of-stream marker) and the result's row count. */
  | { type: "done"; id: number; rows: number; bytes: Uint8Array[] }
  | { type: "count"; id: number; rows: number }
  /**
   * A value does not fit: the worker waits, in the same read transaction, for the query that
   * names its rowid. Built only now because it costs a parse, and misfits are rare.
   */
  | { type: "misfit"; id: number }
  /** Answer to `stop`: nothing of the job is left running, and the worker takes the next job. */
  | { type: "stopped"; id: number }
  | { type: "error"; id: number; status: 400 | 500; message: string; fit?: FitFailure; tooMany?: { rows: number; max: number }; tooLarge?: true };

export interface FitFailure {
  table: string;
  column: string;
  rowid: number | null;
  detail: string;
}
