/**
 * Messages between the HTTP thread (results/executor.ts) and a query worker (engines/sqlite/worker.ts).
 * Arrow bytes travel as transferred ArrayBuffers: moved, not copied.
 */
import type { EncoderColumn } from "../../arrow/encode.ts";
import type { ValidatedQuery } from "../../sql/dialect.ts";

/** The Arrow columns of a query's result, as the encoder takes them. */
/**
 * A row's values as the byte bound of a read counts them (RunJob.maxBytes): characters of text, bytes of blobs, 8 for a number (as in Arrow), 1 for a
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
}

export interface CountJob {
  type: "count";
  id: number;
  sql: string;
}

/**
 * One worker's part of a scan split by rowid ranges (engines/sqlite/striped.ts): it opens a read transaction,
 * reads the table's rowid bounds, then answers `range` messages until `stripe-end`.
 */
export interface StripeJob {
  type: "stripe";
  id: number;
  /** The query restricted to `rowid >= ?1 AND rowid <= ?2`. */
  rangeSql: string;
  /** `SELECT min(rowid), max(rowid)` of the table: read first, it takes the shared lock. */
  boundsSql: string;
  /** Whether to wait for a writer's lock (the first worker) or give up at once (a joining one). */
  wait: boolean;
  table: string;
  columns: EncoderColumn[];
  /** The output format's name; a concatenable one (formats/registry.ts). */
  format: string;
}

export type ToWorker =
  /** `stop`: an Int32Array's SharedArrayBuffer; non-zero means "abandon the running statement" (engines/sqlite/guard.ts). */
  | { type: "open"; path: string; busyTimeoutMs: number; stop: SharedArrayBuffer }
  | RunJob
  | CountJob
  | StripeJob
  /**
   * Rows with lo ≤ rowid ≤ hi: one record batch (or none when the range holds no rows), or, when
   * they hold more than BATCH_MAX_BYTES of text and blobs, `range-part` batches and the last one.
   */
  | { type: "range"; id: number; seq: number; lo: bigint; hi: bigint }
  /** The scan is over (or abandoned): end the read transaction. */
  | { type: "stripe-end"; id: number }
  /** Flow control: the HTTP thread has consumed one more `chunk` or `range-part` message. */
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
  /** The stripe's read transaction is open; the table's rowid bounds (null when it is empty). */
  | { type: "stripe-ready"; id: number; min: bigint | null; max: bigint | null }
  /** A joining worker met a writer's lock and did not wait: the scan goes on without it. */
  | { type: "stripe-busy"; id: number }
  /**
   * A record batch of range `seq` holding BATCH_MAX_BYTES of text and blobs, before the rest of the
   * range: rows of a wide range are not all held at once. Flow-controlled like `chunk`.
   */
  | { type: "range-part"; id: number; seq: number; bytes: Uint8Array[]; rows: number }
  /**
   * The (last) record batch of range `seq` (no bytes when it held no rows), `rows` in it.
   * `exact`: the range was read again with safeIntegers (worker.ts `Stripe.fast`).
   */
  | { type: "range-done"; id: number; seq: number; bytes: Uint8Array[]; rows: number; exact: boolean }
  /**
   * A value does not fit: the worker waits, in the same read transaction, for the query that
   * names its rowid. Built only now because it costs a parse, and misfits are rare.
   */
  | { type: "misfit"; id: number; seq?: number }
  /** Answer to `stop`: nothing of the job is left running, and the worker takes the next job. */
  | { type: "stopped"; id: number }
  | { type: "error"; id: number; status: 400 | 500; message: string; fit?: FitFailure; tooMany?: { rows: number; max: number }; tooLarge?: true };

export interface FitFailure {
  table: string;
  column: string;
  rowid: number | null;
  detail: string;
}
