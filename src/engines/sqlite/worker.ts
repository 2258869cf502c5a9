/**
 * A query worker: owns one read-only SQLite connection and runs one job at a time, encoding
 * rows to Arrow IPC batches as they are read. bun:sqlite cannot interrupt a running query,
 * so the time limit is enforced by the HTTP thread terminating this worker (results/executor.ts). A job
 * whose client went away is stopped without that (`stop`, pool.ts `recall`): the shared stop flag
 * ends a guarded WHERE within a row and any other read at its next batch.
 */
import type { Database, Statement } from "bun:sqlite";
import { AmbiguousNumber, ValueDoesNotFit, type Row } from "../../arrow/encode.ts";
import type { FormatEncoder } from "../../formats/encoder.ts";
import { formatNamed } from "../../formats/registry.ts";
import { CONTINUE_FUNCTION } from "./guard.ts";
import { openReadOnly } from "./catalog.ts";
import { TooManyRowsError } from "../../errors.ts";
import { sqliteErrorReply } from "./sqlite-errors.ts";
import { BATCH_MAX_BYTES, bytesOfValues, MAX_IN_FLIGHT, type CountJob, type FitFailure, type FromWorker, type RunJob, type ToWorker } from "./protocol.ts";

declare const self: Worker;

let db: Database | null = null;
let busyTimeoutMs = 0;
let inFlight = 0;
let currentJob = 0;
let wake: (() => void) | null = null;
let rowidSqlArrived: ((sql: string | null) => void) | null = null;
/** Set by the HTTP thread to abandon the running statement (engines/sqlite/guard.ts) or job (`stop`). */
let stopFlag: Int32Array<ArrayBufferLike> = new Int32Array(1);
/** The running query, which a `stop` waits for before answering. */
let running: Promise<void> = Promise.resolve();

/** Arrow bytes are transferred, not copied (each message is its own ArrayBuffer). */
function send(message: FromWorker): void {
  if (message.type === "chunk" || message.type === "done") {
    self.postMessage(message, message.bytes.map((bytes) => bytes.buffer as ArrayBuffer));
  } else {
    self.postMessage(message);
  }
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const msg = event.data;
  if (msg.type === "open") {
    // safeIntegers: INTEGER values arrive as bigint, exact beyond 2^53 (ARCHITECTURE.md §5).
    busyTimeoutMs = msg.busyTimeoutMs;
    db = openReadOnly(msg.path, { safeIntegers: true, busyTimeoutMs });
    const stop = (stopFlag = new Int32Array(msg.stop));
    // Evaluated first for every row the WHERE looks at (engines/sqlite/guard.ts): once told to stop, the
    // statement is abandoned within a row and this thread can end or take the next job.
    db.function(CONTINUE_FUNCTION, { deterministic: false }, () => {
      if (Atomics.load(stop, 0) !== 0) throw new Error("stopped");
      return 1;
    });
  } else if (msg.type === "ack") {
    if (msg.id !== currentJob) return;
    inFlight--;
    wake?.();
  } else if (msg.type === "rowid-sql") {
    if (msg.id === currentJob) rowidSqlArrived?.(msg.sql);
  } else if (msg.type === "count") {
    runCount(msg);
  } else if (msg.type === "stop") {
    void stopJob(msg.id);
  } else {
    running = runQuery(msg);
  }
};

/** The HTTP thread set the stop flag: the running job ends at its next check, sending nothing more. */
function stopping(): boolean {
  return Atomics.load(stopFlag, 0) !== 0;
}

/**
 * Ends a job nobody wants any more. The stop flag is already set: a query waiting for flow control
 * or for its misfit's rowid query is woken to see it. Once it has ended, the flag is cleared, and
 * `stopped` tells the HTTP thread this worker is free (messages of the job all came before it).
 */
async function stopJob(id: number): Promise<void> {
  wake?.();
  rowidSqlArrived?.(null);
  await running;
  Atomics.store(stopFlag, 0, 0);
  send({ type: "stopped", id });
}

function prepare(sql: string): Statement {
  const stmt = db!.prepare(sql);
  // Third read-only layer after the allow-list and the read-only connection.
  if (!stmt.readonly) throw new QueryError(400, "Only read-only SELECT queries are allowed");
  return stmt;
}

class QueryError extends Error {
  constructor(readonly status: 400 | 500, message: string) {
    super(message);
  }
}

function runCount(job: CountJob): void {
  try {
    const row = prepare(job.sql).values()[0];
    send({ type: "count", id: job.id, rows: Number(row?.[0] ?? 0) });
  } catch (error) {
    send(errorMessage(job.id, error));
  }
}

/** Sends a `chunk`, then waits while MAX_IN_FLIGHT of them are not consumed. */
async function sendFlowControlled(message: Extract<FromWorker, { type: "chunk" }>): Promise<void> {
  inFlight++;
  send(message);
  while (inFlight >= MAX_IN_FLIGHT && !stopping()) await new Promise<void>((r) => (wake = r));
  wake = null;
  if (stopping()) throw new JobStopped();
}

class JobStopped extends Error {}

async function runQuery(job: RunJob): Promise<void> {
  inFlight = 0;
  currentJob = job.id;
  // One read transaction: the count and the scan see the same snapshot.
  db!.run("BEGIN");
  try {
    if (job.countSql && job.countFirst && !boundWithin(job)) {
      const total = countRows(job.countSql);
      if (total > job.maxRows) throw tooManyRows(total, job.maxRows);
    }
    const stmt = prepare(job.sql);
    let encoder = encoderFor(job.format, job.columns, stmt.columnNames);
    // The head (Arrow's schema) goes out with the first batch, and a small result as one message with its end.
    let pending = [encoder.head()];
    let total = 0;
    // iterate() streams without materialising the whole result, and its row objects cost less to
    // build than values()' arrays. The encoder reads column i under SQLite's i-th output name;
    // those are unique (the dialect rejects duplicates), so keyed rows lose nothing.
    let fast = job.fastNumbers ? fastReader(job, stmt) : null;
    let rows = (fast?.statement ?? stmt).iterate() as Iterator<Row>;
    if (fast !== null) encoder = fast.encoder;
    let batch: Row[] = [];
    let valueBytes = 0;
    // Batches end at batchRows rows or BATCH_MAX_BYTES of text and blobs, whichever comes first.
    const wideKeys = wideKeysOf(stmt, job.columns);
    let batchBytes = 0;
    for (let next = rows.next(); !next.done; next = rows.next()) {
      const record = next.value;
      if (job.maxBytes !== null && (valueBytes += bytesOfValues(Object.values(record))) > job.maxBytes) throw tooLarge(job.maxBytes);
      batch.push(record);
      batchBytes += wideBytes(record, wideKeys);
      if (batch.length === job.batchRows || batchBytes >= BATCH_MAX_BYTES) {
        batchBytes = 0;
        const bytes = fast !== null ? fastBatch(encoder, batch) : await encodeBatch(job, encoder, batch, total);
        if (bytes === null) {
          // A number the fast read cannot carry exactly: the rest, this batch included, is read again
          // exactly, in the same read transaction (the same rows in the same order).
          rows.return?.();
          fast = null;
          encoder = encoderFor(job.format, job.columns, stmt.columnNames);
          rows = exactFrom(stmt, total);
          batch = [];
          continue;
        }
        pending.push(bytes);
        total += batch.length;
        if (total > job.maxRows) throw overLimit(job, total);
        await sendFlowControlled({ type: "chunk", id: job.id, bytes: pending, rows: batch.length });
        pending = [];
        batch = [];
      }
    }
    if (batch.length > 0) {
      let bytes = fast !== null ? fastBatch(encoder, batch) : null;
      if (bytes === null && fast !== null) {
        rows.return?.();
        encoder = encoderFor(job.format, job.columns, stmt.columnNames);
        batch = [...iteratorValues(exactFrom(stmt, total))];
      }
      bytes ??= await encodeBatch(job, encoder, batch, total);
      pending.push(bytes);
      total += batch.length;
    }
    if (total > job.maxRows) throw overLimit(job, total);
    pending.push(encoder.end());
    send({ type: "done", id: job.id, rows: total, bytes: pending });
  } catch (error) {
    if (!stopping()) send(errorMessage(job.id, error));
  } finally {
    rowidSqlArrived = null;
    db!.run("COMMIT");
  }
}

/**
 * Arrow answers of a query that reads no clock are read first without `safeIntegers`: bun:sqlite
 * builds numbers faster than bigints, and the encoder writes them with fewer steps. A value the fast
 * paths do not take (an integer beyond 2^53, a number where the storage class matters, a misfit)
 * makes the batch AmbiguousNumber (encode.ts `rereadAmbiguousNumbers`), and the read goes on
 * exactly from that batch, so the bytes are those of the exact read whatever the values
 * (BENCHMARKS.md "Exports since 2026-11-25").
 */
function fastReader(job: RunJob, exact: Statement): { statement: Statement; encoder: FormatEncoder } {
  const statement = prepare(job.sql).safeIntegers(false);
  return { statement, encoder: formatNamed(job.format)!.create(job.columns, { rowKeys: exact.columnNames, rereadAmbiguousNumbers: true }) };
}

/** The batch's message from the fast read, or null when it must be read again exactly. */
function fastBatch(encoder: FormatEncoder, rows: Row[]): Uint8Array | null {
  try {
    return encoder.batch(rows, 0);
  } catch (error) {
    if (error instanceof AmbiguousNumber) return null;
    throw error;
  }
}

/** The exact read's rows after the first `skip` (those already sent). */
function exactFrom(stmt: Statement, skip: number): Iterator<Row> {
  const rows = stmt.iterate() as Iterator<Row>;
  for (let i = 0; i < skip && !rows.next().done; i++);
  return rows;
}

function* iteratorValues<T>(iterator: Iterator<T>): Generator<T> {
  for (let next = iterator.next(); !next.done; next = iterator.next()) yield next.value;
}

/** What naming a misfit needs: the result's table and columns, and how to ask for the rowid query. */
type MisfitContext = Pick<RunJob, "id" | "table" | "columns">;

/** Output names of the text and blob columns. */
function wideKeysOf(stmt: Statement, columns: RunJob["columns"]): string[] {
  return stmt.columnNames.filter((_, i) => columns[i]?.kind === "utf8" || columns[i]?.kind === "binary");
}

/** Characters of text and bytes of blobs in a row's `wideKeys` columns. */
function wideBytes(record: Row, wideKeys: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i < wideKeys.length; i++) bytes += ((record as Record<string, unknown>)[wideKeys[i]!] as string | Uint8Array | null)?.length ?? 0;
  return bytes;
}

/** The output format's encoder (formats/registry.ts); the format travels by name. */
function encoderFor(format: string, columns: RunJob["columns"], rowKeys: string[]): FormatEncoder {
  const known = formatNamed(format);
  if (known === undefined) throw new QueryError(500, `unknown output format '${format}'`);
  return known.create(columns, { rowKeys });
}

async function encodeBatch(job: MisfitContext, encoder: FormatEncoder, rows: Row[], first: number) {
  try {
    return encoder.batch(rows, first);
  } catch (error) {
    if (!(error instanceof ValueDoesNotFit)) throw error;
    const column = job.columns[error.columnIndex]?.name ?? "?";
    const rowid = await findRowid(job, error.rowIndex);
    throw Object.assign(new QueryError(500, error.detail), { fit: { table: job.table, column, rowid, detail: error.detail } });
  }
}

/**
 * The failing row's rowid (failure path only): the HTTP thread sends the query with the rowid
 * appended, which is re-run in the same read transaction up to the failing row.
 */
async function findRowid(job: MisfitContext, rowIndex: number): Promise<number | null> {
  const sql = await new Promise<string | null>((resolve) => {
    rowidSqlArrived = resolve;
    send({ type: "misfit", id: job.id });
  });
  if (sql === null) return null;
  let i = 0;
  for (const row of db!.prepare(sql).values()) {
    if (i++ === rowIndex) return Number(row[row.length - 1]);
  }
  return null;
}

function countRows(sql: string): number {
  return Number(prepare(sql).values()[0]?.[0] ?? 0);
}

/**
 * True when the table's rowid span proves the result within maxRows: two index lookups instead of
 * a count's pass over the table. A NULL span (empty table) bounds nothing to count either.
 */
function boundWithin(job: RunJob): boolean {
  if (!job.boundSql) return false;
  const span = prepare(job.boundSql).values()[0]?.[0];
  return span === null || (span !== undefined && Number(span) <= job.maxRows);
}

/** The scan passed maxRows: refuse with the exact row count, as a count first would have. */
function overLimit(job: RunJob, seen: number): QueryError {
  return tooManyRows(job.countSql ? countRows(job.countSql) : seen, job.maxRows);
}

function tooLarge(maxBytes: number): QueryError {
  return Object.assign(new QueryError(400, `the result holds more than ${maxBytes} bytes of values`), { tooLarge: true as const });
}

function tooManyRows(rows: number, max: number): QueryError {
  return Object.assign(new QueryError(400, new TooManyRowsError(rows, max).message), { tooMany: { rows, max } });
}

function errorMessage(id: number, error: unknown): FromWorker {
  if (error instanceof QueryError) {
    const { fit, tooMany, tooLarge } = error as QueryError & { fit?: FitFailure; tooMany?: { rows: number; max: number }; tooLarge?: true };
    return { type: "error", id, status: error.status, message: error.message, fit, tooMany, tooLarge };
  }
  // An SQLite error caused by the query itself is the client's to fix (ARCHITECTURE.md §8).
  return { type: "error", id, ...sqliteErrorReply(error) };
}
