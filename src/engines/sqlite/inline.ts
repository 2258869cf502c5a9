/**
 * Small reads on the HTTP thread, cheaper than the round trip to a worker. Two kinds:
 *
 * - Provably small: a query over a table (or a view that only picks columns of one table) with no
 *   WHERE and no ORDER BY makes SQLite read at most LIMIT + OFFSET rows and stop, with no expression
 *   evaluated per row: its cost is bounded whatever the data (`eligible`).
 * - Small in fact: a query with a WHERE is tried here under a time budget. Its WHERE is guarded
 *   (engines/sqlite/guard.ts): the guard function, called for every row SQLite looks at, aborts the statement
 *   once INLINE_BUDGET_MS have passed, and the query goes to a worker (a query that usually overruns
 *   is no longer tried here).
 *   A rowid range, an indexed lookup or a filter that finds its LIMIT early answers here; a scan
 *   does not, and costs this thread at most the budget plus a few dozen rows' evaluation. Only a
 *   WHERE whose work per row is small (sql/growth.ts `isCheapPerRow`: no long strings built or
 *   searched) is tried.
 *
 * Either kind stops once its rows hold more than INLINE_MAX_BYTES of text and blobs (a LIMIT bounds
 * the rows, not their size), and goes to a worker.
 *
 * Everything else runs on the worker pool, so a long query still never stalls other requests.
 *
 * Small reads share one read transaction for at most SNAPSHOT_MS. Starting a read transaction
 * costs SQLite eight system calls on a rollback-journal file (take the shared lock, look for a hot
 * journal, read the change counter, look for a WAL, release): more than reading ten rows. So a
 * change committed to the file reaches small reads at most SNAPSHOT_MS later, and a writer waits
 * at most that long for the shared lock, as it waits for any running query. The HTTP thread never
 * waits for a writer: when the file is locked, the read goes to a worker, which does.
 */
import type { Database, Statement } from "bun:sqlite";
import { createStreamEncoder, ValueDoesNotFit, type StreamEncoder } from "../../arrow/encode.ts";
import { encodeAll } from "../../formats/encoder.ts";
import { DEFAULT_FORMAT, type OutputFormat } from "../../formats/registry.ts";
import { countSql, type ValidatedQuery } from "../../sql/dialect.ts";
import { BadRequestError, ServerError, TooManyRowsError } from "../../errors.ts";
import { CONTINUE_FUNCTION } from "./guard.ts";
import { isBusy, openReadOnly } from "./catalog.ts";
import { bytesOfValues, encoderColumns } from "./protocol.ts";
import { LruCache } from "../../sql/cache.ts";
import { sqliteErrorReply } from "./sqlite-errors.ts";

/** The most rows an inline read may touch (LIMIT + OFFSET). */
export const INLINE_MAX_ROWS = 1000;

/** And the most values (rows × columns): a select list may name a column hundreds of times. */
export const INLINE_MAX_CELLS = 64 * INLINE_MAX_ROWS;

/**
 * The most characters and bytes of text and blobs an inline read may hold: reading and encoding
 * more would hold this thread (1,000 rows of 100 KB texts took ~150 ms, ~700 ms as Parquet). A read
 * that passes it stops there and goes to a worker; at most this much plus one row was read here.
 */
export const INLINE_MAX_BYTES = 256 * 1024;

/** How long small reads share one read transaction (see above). */
export const SNAPSHOT_MS = 2;

/** How long a query with a WHERE may run on this thread before it is handed to a worker. */
export const INLINE_BUDGET_MS = 1;

/** Rows examined between two reads of the clock by the budget's guard (a power of two). */
const CLOCK_EVERY = 64;

/** Overruns a query may have before it is judged by its share of overruns (see `worthTrying`). */
const OVERRUNS_ALLOWED = 3;

export interface InlineResult {
  chunks: Uint8Array[];
  rows: number;
}

interface Tries {
  runs: number;
  overruns: number;
  /** Its count (a per_row quote) overran. */
  countOverran: boolean;
}

export class InlineReader {
  private readonly db: Database;
  private readonly encoders = new WeakMap<ValidatedQuery, StreamEncoder>();
  /** Encoders by output columns: new texts with the columns of earlier ones reuse their schema. */
  private readonly encodersByColumns = new LruCache<string, StreamEncoder>(256);
  /** Queries whose rows held more than INLINE_MAX_BYTES: read by a worker from then on. */
  private readonly tooLarge = new WeakSet<ValidatedQuery>();
  /** Budgeted tries and overruns of each query (see `worthTrying`). */
  private readonly tries = new WeakMap<ValidatedQuery, Tries>();
  /** Budgeted runs (queries with a WHERE tried here) and those that overran, since start. */
  readonly stats = { budgetedRuns: 0, overruns: 0 };
  /** Guarded statements by SQL, prepared once (an aborted one is finalized and prepared anew). */
  private readonly statements = new Map<string, Statement>();
  private readonly versionStatement: Statement;
  private snapshotEnd: ReturnType<typeof setTimeout> | null = null;
  /** The guard's deadline (performance.now()); it aborts the statement past it. */
  private deadline = Number.POSITIVE_INFINITY;
  private overBudget = false;

  constructor(
    dbPath: string,
    private readonly maxRows: number,
  ) {
    // Exact integers, as in the workers (ARCHITECTURE.md §5).
    this.db = openReadOnly(dbPath, { safeIntegers: true });
    this.versionStatement = this.db.prepare("PRAGMA data_version");
    // Called for every row the WHERE examines: the clock is read every CLOCK_EVERY calls only.
    let calls = 0;
    this.db.function(CONTINUE_FUNCTION, { deterministic: false }, () => {
      if ((++calls & (CLOCK_EVERY - 1)) !== 0 || performance.now() <= this.deadline) return 1;
      this.overBudget = true;
      throw new Error("over the inline budget");
    });
  }

  eligible(query: ValidatedQuery): boolean {
    if (this.tooLarge.has(query)) return false;
    if (!query.table.limitBounded || query.filtered || query.ordered || query.limit === null) return false;
    const rows = query.limit + (query.offset ?? 0);
    return rows <= INLINE_MAX_ROWS && rows * query.columns.length <= INLINE_MAX_CELLS && query.limit <= this.maxRows;
  }

  /** Whether a query may be tried here at all: provably small, or a WHERE not yet found too slow. */
  worthTrying(query: ValidatedQuery): boolean {
    if (this.tooLarge.has(query)) return false;
    if (this.eligible(query)) return true;
    // One row of a costly WHERE (long strings searched) could hold this thread past any budget.
    if (!query.filtered || !query.table.limitBounded || !query.cheapPerRow) return false;
    // A query that usually overruns goes straight to the workers; one that overran now and then
    // (a cold cache, a pause of this thread) is still tried.
    const tries = this.tries.get(query);
    return tries === undefined || tries.overruns < OVERRUNS_ALLOWED || tries.overruns * 2 < tries.runs;
  }

  /**
   * The whole result of a query in `format`, or null when it must go to a worker: it overran the
   * budget, a stored value does not fit its type (the worker reports it with its rowid), or a
   * writer holds the file. An SQLite error caused by the query is a 400, as on a worker.
   */
  read(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT): InlineResult | null {
    const rows = this.rowsOf(query);
    if (rows === null) return null;
    if (rows.length > this.maxRows) throw new TooManyRowsError(rows.length, this.maxRows);
    try {
      // Arrow, the common case, as one buffer from an encoder kept with the query; other formats anew.
      const bytes = format.name === "arrow" ? this.encoderFor(query).wholeStream(rows) : encodeAll(format.create(encoderColumns(query)), rows);
      return { chunks: [bytes], rows: rows.length };
    } catch (error) {
      if (error instanceof ValueDoesNotFit) return null;
      throw error;
    }
  }

  /**
   * SQLite's data version as small reads see it (result-cache.ts): read in the shared read
   * transaction, so it names the data the next small read returns. Null when a writer holds the file.
   */
  dataVersion(): bigint | null {
    try {
      this.openSnapshot();
      return this.versionStatement.values()[0]![0] as bigint;
    } catch (error) {
      if (!isBusy(error)) throw error;
      this.closeSnapshot();
      return null;
    }
  }

  /** The query's row count (per_row quotes), or null when a worker must count it. */
  count(query: ValidatedQuery): number | null {
    const rows = this.rowsOf(query, countSql(query));
    return rows === null ? null : Number(rows[0]?.[0] ?? 0);
  }

  /** The rows of `sql` (the query, or its count), or null when they must be read by a worker. */
  private rowsOf(query: ValidatedQuery, sql?: string): unknown[][] | null {
    const budgeted = !this.eligible(query);
    if (budgeted && !this.worthTrying(query)) return null;
    // Reading examines at least the rows counting does: a read after an overrun count would
    // overrun too, and a per_row purchase would read part of the table a third time.
    if (budgeted && sql === undefined && this.tries.get(query)?.countOverran) return null;
    let stmt: Statement;
    try {
      // Preparing reads the schema, which needs the file's shared lock: a writer may hold it.
      stmt = budgeted || sql !== undefined ? this.statementFor(sql ?? query.runSql) : this.db.query(query.sql);
    } catch (error) {
      if (isBusy(error)) return null;
      throw this.replyFor(error);
    }
    if (!stmt.readonly) return null;
    this.openSnapshot();
    this.overBudget = false;
    this.deadline = budgeted ? performance.now() + INLINE_BUDGET_MS : Number.POSITIVE_INFINITY;
    const tries = budgeted ? this.triesOf(query) : null;
    if (tries !== null) {
      tries.runs++;
      this.stats.budgetedRuns++;
    }
    try {
      const rows = rowsWithin(stmt, INLINE_MAX_BYTES);
      if (rows === null) this.tooLarge.add(query);
      return rows;
    } catch (error) {
      if (this.overBudget) {
        tries!.overruns++;
        this.stats.overruns++;
        if (sql !== undefined) tries!.countOverran = true;
        this.forget(sql ?? query.runSql);
        return null;
      }
      if (isBusy(error)) {
        this.closeSnapshot();
        return null;
      }
      throw this.replyFor(error);
    } finally {
      this.deadline = Number.POSITIVE_INFINITY;
    }
  }

  /** An SQLite error caused by the query is the client's (400), as on a worker; anything else 500. */
  private replyFor(error: unknown): Error {
    const reply = sqliteErrorReply(error);
    return reply.status === 400 ? new BadRequestError(reply.message) : new ServerError(reply.message);
  }

  private triesOf(query: ValidatedQuery): Tries {
    let tries = this.tries.get(query);
    if (tries === undefined) {
      tries = { runs: 0, overruns: 0, countOverran: false };
      this.tries.set(query, tries);
    }
    return tries;
  }

  private statementFor(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
      // Bounded like the validated-query cache: the oldest statement goes first.
      if (this.statements.size > 1024) this.forget(this.statements.keys().next().value!);
    }
    return statement;
  }

  /** Finalizes a statement (an aborted one must not keep the read transaction open). */
  private forget(sql: string): void {
    this.statements.get(sql)?.finalize();
    this.statements.delete(sql);
  }

  private openSnapshot(): void {
    if (this.snapshotEnd !== null) return;
    this.db.run("BEGIN");
    this.snapshotEnd = setTimeout(() => this.closeSnapshot(), SNAPSHOT_MS);
  }

  private closeSnapshot(): void {
    if (this.snapshotEnd === null) return;
    clearTimeout(this.snapshotEnd);
    this.snapshotEnd = null;
    this.db.run("COMMIT");
  }

  /** The encoder of a query, kept while its validation is cached (and shared by queries with its columns). */
  private encoderFor(query: ValidatedQuery): StreamEncoder {
    let encoder = this.encoders.get(query);
    if (!encoder) {
      const columns = encoderColumns(query);
      const key = JSON.stringify(columns);
      encoder = this.encodersByColumns.get(key);
      if (encoder === undefined) {
        encoder = createStreamEncoder(columns);
        this.encodersByColumns.set(key, encoder);
      }
      this.encoders.set(query, encoder);
    }
    return encoder;
  }

  close(): void {
    this.closeSnapshot();
    for (const sql of [...this.statements.keys()]) this.forget(sql);
    this.versionStatement.finalize();
    this.db.close();
  }
}

/**
 * The statement's rows as arrays, or null once they hold more than `maxBytes` of text (counted in
 * characters) and blobs: the read stops there (leaving the loop resets the statement).
 */
function rowsWithin(stmt: Statement, maxBytes: number): unknown[][] | null {
  const rows: unknown[][] = [];
  let bytes = 0;
  // Output names are unique (the dialect rejects duplicates). Read by name, in the statement's
  // order: Object.values would put integer-like names ("0", "1990") first.
  const names = stmt.columnNames;
  for (const record of stmt.iterate() as Iterable<Record<string, unknown>>) {
    const row = names.map((name) => record[name]);
    bytes += bytesOfValues(row);
    if (bytes > maxBytes) return null;
    rows.push(row);
  }
  return rows;
}
