/**
 * A query worker: owns one read-only SQLite connection and runs one job at a time, encoding
 * rows to Arrow IPC batches as they are read. bun:sqlite cannot interrupt a running query,
 * so the time limit is enforced by the HTTP thread terminating this worker (results/executor.ts). A job
 * whose client went away is stopped without that (`stop`, pool.ts `recall`): the shared stop flag
 * ends a guarded WHERE within a row and any other read at its next batch.
 */
import type { Database, Statement } from "bun:sqlite";
import { ValueDoesNotFit, type Row } from "../../arrow/encode.ts";
import type { FormatEncoder } from "../../formats/encoder.ts";
import { formatNamed } from "../../formats/registry.ts";
import { CONTINUE_FUNCTION } from "./guard.ts";
import { isBusy, openReadOnly } from "./catalog.ts";
import { TooManyRowsError } from "../../errors.ts";
import { sqliteErrorReply } from "./sqlite-errors.ts";
import { BATCH_MAX_BYTES, bytesOfValues, MAX_IN_FLIGHT, type CountJob, type FitFailure, type FromWorker, type RunJob, type StripeJob, type ToWorker } from "./protocol.ts";

declare const self: Worker;

let db: Database | null = null;
let busyTimeoutMs = 0;
let inFlight = 0;
let currentJob = 0;
let wake: (() => void) | null = null;
let rowidSqlArrived: ((sql: string | null) => void) | null = null;
/** Set by the HTTP thread to abandon the running statement (engines/sqlite/guard.ts) or job (`stop`). */
let stopFlag: Int32Array<ArrayBufferLike> = new Int32Array(1);
/** The running query, or the ranges queued one after another, which a `stop` waits for before answering. */
let running: Promise<void> = Promise.resolve();

/** This worker's part of a scan split by rowid ranges (see engines/sqlite/striped.ts), while it runs. */
interface Stripe {
  job: StripeJob;
  statement: Statement;
  encoder: FormatEncoder;
  /** Output names of the text and blob columns, whose bytes end a batch at BATCH_MAX_BYTES. */
  wideKeys: string[];
  failed: boolean;
}
let stripe: Stripe | null = null;

/** Arrow bytes are transferred, not copied (each message is its own ArrayBuffer). */
function send(message: FromWorker): void {
  if (message.type === "chunk" || message.type === "done" || message.type === "range-done" || message.type === "range-part") {
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
    if (msg.id === currentJob || msg.id === stripe?.job.id) rowidSqlArrived?.(msg.sql);
  } else if (msg.type === "count") {
    runCount(msg);
  } else if (msg.type === "stripe") {
    beginStripe(msg);
  } else if (msg.type === "range") {
    // One range after another: a range waiting for its misfit's rowid query holds the next back
    // (which would otherwise take its place in `rowidSqlArrived`), and `stop` waits for them all.
    running = running.then(() => runRange(msg.id, msg.seq, msg.lo, msg.hi));
  } else if (msg.type === "stripe-end") {
    endStripe(msg.id);
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
 * or for its misfit's rowid query is woken to see it. Once it has ended, the stripe's read
 * transaction (if any) ends too, the flag is cleared, and `stopped` tells the HTTP thread this
 * worker is free (messages of the job all came before it).
 */
async function stopJob(id: number): Promise<void> {
  wake?.();
  rowidSqlArrived?.(null);
  await running;
  endStripe(id);
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

/** Sends a `chunk` or `range-part`, then waits while MAX_IN_FLIGHT of them are not consumed. */
async function sendFlowControlled(message: Extract<FromWorker, { type: "chunk" | "range-part" }>): Promise<void> {
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
    const encoder = encoderFor(job.format, job.columns, stmt.columnNames);
    // The head (Arrow's schema) goes out with the first batch, and a small result as one message with its end.
    let pending = [encoder.head()];
    let total = 0;
    // iterate() streams without materialising the whole result, and its row objects cost less to
    // build than values()' arrays. The encoder reads column i under SQLite's i-th output name;
    // those are unique (the dialect rejects duplicates), so keyed rows lose nothing.
    let batch: Row[] = [];
    let valueBytes = 0;
    // Batches end at batchRows rows or BATCH_MAX_BYTES of text and blobs, whichever comes first.
    const wideKeys = wideKeysOf(stmt, job.columns);
    let batchBytes = 0;
    for (const record of stmt.iterate() as Iterable<Row>) {
      if (job.maxBytes !== null && (valueBytes += bytesOfValues(Object.values(record))) > job.maxBytes) throw tooLarge(job.maxBytes);
      batch.push(record);
      batchBytes += wideBytes(record, wideKeys);
      if (batch.length === job.batchRows || batchBytes >= BATCH_MAX_BYTES) {
        batchBytes = 0;
        pending.push(await encodeBatch(job, encoder, batch, total));
        total += batch.length;
        if (total > job.maxRows) throw overLimit(job, total);
        await sendFlowControlled({ type: "chunk", id: job.id, bytes: pending, rows: batch.length });
        pending = [];
        batch = [];
      }
    }
    if (batch.length > 0) {
      pending.push(await encodeBatch(job, encoder, batch, total));
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

/** What naming a misfit needs: the result's table and columns, and how to ask for the rowid query. */
type MisfitContext = Pick<RunJob, "id" | "table" | "columns"> & { seq?: number; params?: bigint[] };

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
 * appended (for a range, restricted to it), which is re-run in the same read transaction up to
 * the failing row.
 */
async function findRowid(job: MisfitContext, rowIndex: number): Promise<number | null> {
  const sql = await new Promise<string | null>((resolve) => {
    rowidSqlArrived = resolve;
    send({ type: "misfit", id: job.id, ...(job.seq === undefined ? {} : { seq: job.seq }) });
  });
  if (sql === null) return null;
  let i = 0;
  for (const row of db!.prepare(sql).values(...(job.params ?? []))) {
    if (i++ === rowIndex) return Number(row[row.length - 1]);
  }
  return null;
}

/**
 * Opens the stripe's read transaction by reading the rowid bounds. A joining worker must not wait
 * for a writer's lock: the first worker holds a shared lock until the scan ends, so a writer
 * waiting for it would make the joining worker wait for the end of the very scan it should help.
 */
function beginStripe(job: StripeJob): void {
  currentJob = job.id;
  inFlight = 0;
  db!.run("BEGIN");
  if (!job.wait) db!.run("PRAGMA busy_timeout = 0");
  try {
    const [min, max] = (prepare(job.boundsSql).values()[0] ?? [null, null]) as [bigint | null, bigint | null];
    const statement = prepare(job.rangeSql);
    const encoder = encoderFor(job.format, job.columns, statement.columnNames);
    stripe = { job, statement, encoder, wideKeys: wideKeysOf(statement, job.columns), failed: false };
    send({ type: "stripe-ready", id: job.id, min, max });
  } catch (error) {
    db!.run("COMMIT");
    send(isBusy(error) && !job.wait ? { type: "stripe-busy", id: job.id } : errorMessage(job.id, error));
  } finally {
    if (!job.wait) db!.run(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  }
}

/**
 * The range's rows: a `range-part` every BATCH_MAX_BYTES of text and blobs (held back while
 * MAX_IN_FLIGHT are not consumed), then `range-done` with the last batch. Memory stays a few
 * batches however wide the range's rows are: a sample of 16 rows (stripe-plan.ts) may miss a
 * cluster of wide rows.
 */
async function runRange(id: number, seq: number, lo: bigint, hi: bigint): Promise<void> {
  const current = stripe;
  if (current === null || current.job.id !== id || current.failed || stopping()) return;
  try {
    const context = { ...current.job, seq, params: [lo, hi] };
    let rows: Row[] = [];
    let bytes = 0;
    let first = 0;
    for (const record of current.statement.iterate(lo, hi) as Iterable<Row>) {
      rows.push(record);
      if ((bytes += wideBytes(record, current.wideKeys)) < BATCH_MAX_BYTES) continue;
      const part = [await encodeBatch(context, current.encoder, rows, first)];
      first += rows.length;
      await sendFlowControlled({ type: "range-part", id, seq, bytes: part, rows: rows.length });
      rows = [];
      bytes = 0;
    }
    const last = rows.length > 0 ? [await encodeBatch(context, current.encoder, rows, first)] : [];
    send({ type: "range-done", id, seq, bytes: last, rows: rows.length });
  } catch (error) {
    current.failed = true;
    if (!stopping()) send(errorMessage(id, error));
  }
}

function endStripe(id: number): void {
  if (stripe === null || stripe.job.id !== id) return;
  stripe = null;
  rowidSqlArrived = null;
  db!.run("COMMIT");
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
