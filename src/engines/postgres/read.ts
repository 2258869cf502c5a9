/**
 * One read from PostgreSQL (DESIGN.md §14 "Reads only, bounded"): a reserved connection,
 * BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY (the count and the rows from one snapshot),
 * statement_timeout as the server's own guard, then `COPY (SELECT …) TO STDOUT (FORMAT binary)`
 * read through Bun.SQL's `readable()` (Bun ≥ 1.4.4) and decoded (copy-binary.ts) into batches that
 * are pulled: what is not asked for is not read, and the server waits (ClientWrite). Bun reads about
 * 0.3 MB ahead (readable()'s 64 KiB queue, then it stops reading the socket) whatever the result's
 * size; the kernel's socket buffers hold more (up to tcp_rmem's and tcp_wmem's maxima, tens of MB),
 * outside this process: a result smaller than them may be sent whole while nobody pulls
 * (ARCHITECTURE.md §10).
 *
 * statement_timeout is only the server's guard: a backend blocked writing to a reader that stopped
 * reading may not act on it (nor on a cancel) until it can write again, and a failure that reaches
 * Bun behind unread bytes settles nothing until they are read. So the deadline is ours: at
 * `deadlineMs` (default `timeoutMs`), or when `signal` aborts, or when the consumer stops iterating,
 * the statement is cancelled (`q.cancel()`: a CancelRequest on a second connection, while Bun drains
 * the socket so the backend can act on it), the transaction rolled back, and the connection
 * released, whether or not the consumer comes back.
 * A connection whose ROLLBACK is not answered within ROLLBACK_GRACE_MS is closed, not pooled.
 */
import type { ReservedSQL, SQL } from "bun";
import { timeLimitError } from "../../results/time-budget.ts";
import { bytesRead } from "../paced-collection.ts";
import { BinaryCopyDecoder, type CopyDecoderOptions, type DecodedBatch } from "./copy-binary.ts";
import type { DecodeColumn } from "./types.ts";

export interface PgReadOptions extends CopyDecoderOptions {
  /**
   * The SELECT to read, without parameters (COPY takes none): literals are inlined, which is exact
   * because standard_conforming_strings is on in the read's transaction. Its select list must read
   * each column in the form `columns` expects (types.ts selectExpression).
   */
  select: string;
  /** The select list's columns, in order. */
  columns: readonly DecodeColumn[];
  /**
   * The server's statement_timeout, and this read's deadline unless `deadlineMs` (limits.query_timeout_ms).
   * Infinity: no time limit at all (`arrow402 validate` reads whole tables).
   */
  timeoutMs: number;
  /**
   * When this read is stopped, from the call, if not at `timeoutMs`: a caller that does not count the
   * time its reader is slow gives more (or Infinity, and stops the read through `signal`).
   */
  deadlineMs?: number;
  /** Stops the read when aborted (the client went away); the read rejects with its reason. */
  signal?: AbortSignal;
  /** Also count the select's rows, in the same snapshot, before the read (per_row prices). */
  count?: boolean;
  /**
   * With `count`: a query of one text value (or NULL, for none) that bounds the select's rows from
   * above, run first in the same snapshot; when its value is at most `within`, no count is made
   * (`count` is then null). A table's integer key gives one cheaply: max − min + 1, two index lookups.
   */
  bound?: { sql: string; within: number };
  /**
   * The decoder to read with, for `columns` and these options, made ready by BinaryCopyDecoder.reset
   * (a small read's, kept by the engine); by default a new one.
   */
  decoder?: BinaryCopyDecoder;
  /**
   * The pool's connections already hold this read's settings for their whole session
   * (`sessionSettings(timeoutMs)` given at connect, as the engine's pool does): a read without a
   * count is then the COPY alone, one statement with one snapshot and one round trip, not a
   * transaction around it.
   */
  inSession?: boolean;
}

export interface PgRead {
  /** The select's row count in the read's snapshot (when asked for), else null. */
  readonly count: number | null;
  /**
   * The decoded batches, pulled. Ends after the last batch (COMMIT, release); rejects with the
   * deadline's error, the signal's reason, a refused value (PgValueRefused) or the server's error.
   * Leaving the iteration early (break, return()) stops the read.
   */
  readonly batches: AsyncGenerator<DecodedBatch, void, undefined>;
  /** Stops the read if it still runs; resolves once the connection is released. */
  close(reason?: unknown): Promise<void>;
}

/** How long a ROLLBACK or COMMIT may take before the connection is closed instead of pooled. */
export const ROLLBACK_GRACE_MS = 5_000;

/**
 * The settings every read runs under, for a pool's connections from their start (Bun.SQL's
 * `connection` option: PostgreSQL takes them in the startup message, over the role's and the
 * database's defaults), with every transaction read-only.
 */
export function sessionSettings(timeoutMs: number): Record<string, string> {
  return { ...Object.fromEntries(settings(timeoutMs)), default_transaction_read_only: "on" };
}

/** Session settings of the read's transaction (set_config(…, true): they end with it). An infinite timeout sets none ("0"). */
function settings(timeoutMs: number): [string, string][] {
  const bounded = Number.isFinite(timeoutMs);
  return [
    ["statement_timeout", bounded ? String(Math.max(1, Math.ceil(timeoutMs))) : "0"],
    // A backend whose client vanished mid-transaction (no TCP reset) ends on its own.
    ["idle_in_transaction_session_timeout", bounded ? String(Math.ceil(timeoutMs) + ROLLBACK_GRACE_MS) : "0"],
    // Inlined literals ('…' with backslashes) read as written.
    ["standard_conforming_strings", "on"],
    // The text form of `::text` columns, whatever the role's or database's defaults.
    ["DateStyle", "ISO, YMD"],
    ["IntervalStyle", "postgres"],
    ["TimeZone", "UTC"],
    ["extra_float_digits", "1"],
    ["bytea_output", "hex"],
    // A seq scan starts at the table's first page, so a repeated read meets the rows in the same order.
    ["synchronize_seqscans", "off"],
    // Nor do parallel workers interleave their rows: the same data reads as the same bytes, whose
    // digest a replay is compared by (DESIGN.md §17).
    ["max_parallel_workers_per_gather", "0"],
  ];
}

/** Opens the read: reserve, BEGIN, settings, count; the COPY starts at once and is read as pulled. */
export async function openPgRead(sql: SQL, options: PgReadOptions): Promise<PgRead> {
  options.signal?.throwIfAborted();
  const conn = await sql.reserve(options.signal === undefined ? undefined : { signal: options.signal });
  const decoder = options.decoder ?? new BinaryCopyDecoder(options.columns, options);
  /** The COPY runs alone, without a transaction around it. */
  const single = options.inSession === true && options.count !== true;

  let stopped: { reason: unknown } | null = null;
  /** The statement the connection runs now (BEGIN, the settings, the count, the COPY). */
  let running: Bun.SQL.Query<unknown> | null = null;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let copy: Promise<unknown> | null = null;
  /** The COPY's own failure (a server error), kept for the consumer when it comes back. */
  let copyFailed: { error: unknown } | null = null;
  let finished: Promise<void> | null = null;

  const finish = (commit: boolean): Promise<void> =>
    (finished ??= (async () => {
      clearTimeout(deadline);
      options.signal?.removeEventListener("abort", onAbort);
      const statement = running;
      if (!commit) {
        statement?.cancel();
        await reader?.cancel().catch(() => {});
      }
      // The statement settles before the transaction ends: a cancel meant for it cannot reach the
      // next user of the pooled connection.
      await statement?.catch(() => {});
      // A COPY alone (inSession) that ended well left no transaction to end; otherwise COMMIT or
      // ROLLBACK (a ROLLBACK outside a transaction only warns, and shows the connection answers).
      if (commit && single) await conn.release();
      else await endTransaction(conn, commit);
    })());
  const copyError = (): unknown => copyFailed?.error;
  /** Throws the stop's reason once stopped (a function: the stop comes from callbacks). */
  const throwIfStopped = (): void => {
    if (stopped !== null) throw stopped.reason;
  };
  const stop = (reason: unknown) => {
    if (stopped !== null || finished !== null) return;
    stopped = { reason };
    void finish(false);
  };
  const deadlineMs = options.deadlineMs ?? options.timeoutMs;
  const deadline = Number.isFinite(deadlineMs) ? setTimeout(() => stop(timeLimitError(deadlineMs)), deadlineMs) : undefined;
  const onAbort = () => stop(options.signal?.reason);
  options.signal?.addEventListener("abort", onAbort, { once: true });

  /** The error to report: the stop's reason once stopped; the server's statement_timeout is our time limit. */
  const failure = (error: unknown): unknown => {
    if (stopped !== null) return stopped.reason;
    if (isStatementTimeout(error)) return timeLimitError(options.timeoutMs);
    return error;
  };
  const run = async <T>(query: Bun.SQL.Query<T>): Promise<T> => {
    throwIfStopped();
    running = query as Bun.SQL.Query<unknown>;
    try {
      return await query;
    } finally {
      running = null;
    }
  };

  let count: number | null = null;
  try {
    if (options.inSession !== true || options.count === true) {
      await run(conn.unsafe("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
      const pairs = settings(options.timeoutMs);
      await run(conn.unsafe(`SELECT ${pairs.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(", ")}`, pairs.flat()));
    }
    let bounded = false;
    if (options.count === true && options.bound !== undefined) {
      const [row] = (await run(conn.unsafe(options.bound.sql))) as Record<string, string | null>[];
      const value = row === undefined ? null : Object.values(row)[0];
      bounded = value === null || value === undefined || Number(value) <= options.bound.within;
    }
    if (options.count === true && !bounded) {
      const [row] = (await run(conn.unsafe(`SELECT count(*)::text AS n FROM (${options.select}) AS counted`))) as { n: string }[];
      count = Number(row!.n);
    }
    throwIfStopped();
    const query = conn.unsafe(`COPY (${options.select}) TO STDOUT (FORMAT binary)`);
    reader = query.readable().getReader();
    running = query as Bun.SQL.Query<unknown>;
    copy = query;
    // A statement that fails while nobody pulls (an error on its first rows) gives its connection
    // back at once; the consumer gets the error when it comes.
    query.catch((error: unknown) => {
      copyFailed = { error };
      void finish(false);
    });
  } catch (error) {
    const reported = failure(error);
    await finish(false);
    throw reported;
  }

  async function* batches(): AsyncGenerator<DecodedBatch, void, undefined> {
    let complete = false;
    try {
      for (;;) {
        throwIfStopped();
        let chunk: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>;
        try {
          chunk = await reader!.read();
        } catch (error) {
          throw failure(copyError() ?? error);
        }
        throwIfStopped();
        const failed = copyError();
        if (failed !== undefined) throw failure(failed);
        if (chunk.done) break;
        // What earlier chunks were decoded into is garbage once sent (paced-collection.ts).
        bytesRead(chunk.value.byteLength);
        for (const batch of decoder.push(chunk.value)) {
          yield batch;
          throwIfStopped();
        }
      }
      const last = decoder.end();
      await copy!.catch((error: unknown) => {
        throw failure(error);
      });
      complete = true;
      if (last !== null) yield last;
    } finally {
      // Either the stream ended (COMMIT) or anything else happened: cancel, ROLLBACK.
      await finish(complete && stopped === null);
    }
  }

  return {
    count,
    batches: batches(),
    async close(reason?: unknown) {
      stop(reason ?? new Error("the read was closed"));
      await finish(false);
    },
  };
}

/**
 * A small read read whole, at once (the engine's first part of a result, engine.ts readWhole): the
 * COPY alone on a connection whose session holds the read's settings (`inSession`), its chunks
 * decoded as they arrive, into the batches it returns; or null once `enough` (told of each batch)
 * says the result is past what is read whole (the statement is then cancelled if it still runs). openPgRead's guarantees without its
 * pulled stream: at `timeoutMs` the statement is cancelled and the read rejects with the time limit;
 * the statement settles before its connection goes back; a read that did not end well ends with a
 * ROLLBACK (closed, not pooled, when that is not answered: endTransaction).
 */
export async function readPgWhole(
  sql: SQL,
  options: { select: string; timeoutMs: number; decoder: BinaryCopyDecoder; enough: (batch: DecodedBatch) => boolean },
): Promise<DecodedBatch[] | null> {
  const conn = await sql.reserve();
  const query = conn.unsafe(`COPY (${options.select}) TO STDOUT (FORMAT binary)`);
  const reader = query.readable().getReader();
  // Its failure reaches the reader too; this only keeps it from being reported as unhandled.
  query.catch(() => {});
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    query.cancel();
    void reader.cancel().catch(() => {});
  }, options.timeoutMs);
  const batches: DecodedBatch[] = [];
  let ended = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (timedOut) throw timeLimitError(options.timeoutMs);
      if (chunk.done) break;
      bytesRead(chunk.value.byteLength);
      for (const batch of options.decoder.push(chunk.value)) {
        batches.push(batch);
        if (options.enough(batch)) return null;
      }
    }
    const last = options.decoder.end();
    await query;
    ended = true;
    if (last === null) return batches;
    batches.push(last);
    return options.enough(last) ? null : batches;
  } catch (error) {
    throw timedOut || isStatementTimeout(error) ? timeLimitError(options.timeoutMs) : error;
  } finally {
    clearTimeout(deadline);
    if (!ended) {
      query.cancel();
      await reader.cancel().catch(() => {});
    }
    await query.catch(() => {});
    if (ended) await conn.release();
    else await endTransaction(conn, false);
  }
}

/** COMMIT or ROLLBACK, then release; a connection that does not answer in time is closed instead. */
async function endTransaction(conn: ReservedSQL, commit: boolean): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([
    conn.unsafe(commit ? "COMMIT" : "ROLLBACK").then(
      () => true,
      () => false,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ROLLBACK_GRACE_MS))),
  ]);
  clearTimeout(timer);
  // Bun closes a connection released inside a transaction rather than pooling it; one whose server
  // stopped answering is closed here, so the pool never hands it out again.
  if (ended) await conn.release();
  else await conn.close().catch(() => {});
}

/** PostgreSQL's query_canceled (57014) raised by statement_timeout. */
function isStatementTimeout(error: unknown): boolean {
  const e = error as { errno?: unknown; message?: unknown } | null;
  return e?.errno === "57014" && /statement timeout/i.test(String(e.message));
}

/**
 * The row count of a query (`count`: its `SELECT count(*) …`), in a READ ONLY transaction of its
 * own under statement_timeout, stopped on the server by our deadline as a read is.
 */
export async function countPgRows(sql: SQL, count: string, timeoutMs: number): Promise<number> {
  const conn = await sql.reserve();
  let ended = false;
  try {
    await conn.unsafe("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    await conn`SELECT set_config('statement_timeout', ${String(Math.max(1, Math.ceil(timeoutMs)))}, true)`;
    const query = conn.unsafe(count);
    const timer = setTimeout(() => query.cancel(), timeoutMs);
    let rows: { count: string | number | bigint }[];
    try {
      rows = (await query) as { count: string | number | bigint }[];
    } catch (error) {
      throw isCancel(error) ? timeLimitError(timeoutMs) : error;
    } finally {
      clearTimeout(timer);
    }
    await endTransaction(conn, true);
    ended = true;
    return Number(Object.values(rows[0] ?? { count: 0 })[0]);
  } finally {
    if (!ended) await endTransaction(conn, false);
  }
}

/** The server's word for a statement cancelled (57014: our cancel, or statement_timeout). */
function isCancel(error: unknown): boolean {
  return (error as { errno?: string }).errno === "57014";
}
