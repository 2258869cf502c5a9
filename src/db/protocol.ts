/**
 * Messages between the HTTP thread (db/execute.ts) and a query worker (db/worker.ts).
 * Arrow bytes travel as transferred ArrayBuffers: moved, not copied.
 */
import type { EncoderColumn } from "../arrow/encode.ts";

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
  /** Used only after a value fails to fit, to name its rowid. */
  rowidSql: string | null;
  table: string;
  columns: EncoderColumn[];
  maxRows: number;
  batchRows: number;
}

export interface CountJob {
  type: "count";
  id: number;
  sql: string;
}

export type ToWorker =
  | { type: "open"; path: string }
  | RunJob
  | CountJob
  /** Flow control: the HTTP thread has consumed one more chunk. */
  | { type: "ack"; id: number };

export type FromWorker =
  | { type: "chunk"; id: number; bytes: Uint8Array; rows: number }
  | { type: "done"; id: number; rows: number }
  | { type: "count"; id: number; rows: number }
  | { type: "error"; id: number; status: 400 | 500; message: string; fit?: FitFailure };

export interface FitFailure {
  table: string;
  column: string;
  rowid: number | null;
  detail: string;
}
