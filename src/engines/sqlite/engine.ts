/**
 * The SQLite engine (DESIGN.md §14; ARCHITECTURE.md §4, §11): counts and reads validated queries on
 * a pool of worker threads, each with its own read-only connection, under the time limit its
 * guard enforces (guard.ts); a streamed
 * export of a whole table may be read by two workers at once (striped.ts). Results are handed
 * over as encoded chunks into a ResultStream (results/result-stream.ts), whose delivery knows
 * nothing of SQLite.
 */
import type { Database } from "bun:sqlite";
import type { TableConfig } from "../../config/types.ts";
import type { TableInfo } from "../../catalog.ts";
import type { Described, ReadOptions, StoredMisfit, TableEngine, TableSample } from "../engine.ts";
import { ServerBusyError } from "../../errors.ts";
import type { OutputFormat } from "../../formats/registry.ts";
import { CountCache } from "../../results/count-cache.ts";
import type { SendingOptions } from "../../results/outgoing.ts";
import { ResultStream, workerError, type QueryResult } from "../../results/result-stream.ts";
import { BUSY_MESSAGE, BUSY_RETRY_SECONDS } from "../../results/sent-body.ts";
import { countSql, type ValidatedQuery } from "../../sql/dialect.ts";
import { describeTables, isBusy, openReadOnly } from "./catalog.ts";
import { LaneClassifier } from "./lanes.ts";
import { WorkerPool, type WorkerSlot } from "./pool.ts";
import { batchRowsFor, encoderColumns, MAX_IN_FLIGHT, type FromWorker, type ToWorker } from "./protocol.ts";
import { rowidSpanSql, rowidSql } from "./rowid.ts";
import { sampleSqliteTable } from "./sample.ts";
import { scanSqliteTable } from "./scan.ts";
import { StripePlanner } from "./stripe-plan.ts";
import { StripedScan } from "./striped.ts";
import { TimeBudget, timeLimitError } from "../../results/time-budget.ts";

export interface SqliteLimits {
  maxRows: number;
  queryTimeoutMs: number;
  /** A split scan's helper asked back for an interactive query is substituted past this (default striped.ts HELPER_RETURN_MS). */
  helperReturnMs?: number;
}

/** The most rows (LIMIT + OFFSET) of a provably small read, and the most values (rows × columns). */
const SMALL_MAX_ROWS = 1000;
const SMALL_MAX_CELLS = 64 * SMALL_MAX_ROWS;

export class SqliteEngine implements TableEngine {
  readonly kind = "sqlite" as const;
  private nextId = 1;
  private readonly pool: WorkerPool;
  private readonly stripes: StripePlanner;
  private readonly versionDb: Database;
  private readonly counts: CountCache;
  private readonly lanes: LaneClassifier;
  /** SQLite's `PRAGMA data_version` on a connection of this thread, or null while a writer holds the file. */
  private readonly version: () => number | null;
  /**
   * For operators and tests: scans of a whole table read by two workers at once (and the ranges
   * their workers have read), the helpers substituted by a fresh worker for an interactive query,
   * and the most parts of wide ranges one split scan has kept at once for a later range (striped.ts).
   */
  readonly stats = { splitScans: 0, rangesRead: 0, exactRangeReads: 0, helpersAskedBack: 0, helpersSubstituted: 0, mostPartsKept: 0 };

  constructor(
    private readonly dbPath: string,
    private readonly limits: SqliteLimits,
    workers = Math.max(2, navigator.hardwareConcurrency),
  ) {
    this.pool = new WorkerPool(dbPath, workers, limits.queryTimeoutMs);
    this.stripes = new StripePlanner(openReadOnly(dbPath));
    this.versionDb = openReadOnly(dbPath);
    this.lanes = new LaneClassifier(this.versionDb);
    const dataVersion = this.versionDb.prepare("PRAGMA data_version");
    this.version = () => {
      try {
        return Number(dataVersion.values()[0]?.[0]);
      } catch {
        return null; // a writer holds the file: nothing is kept
      }
    };
    this.counts = new CountCache(this.version);
  }

  /** Query workers terminated and replaced: over the time limit, or not stopping when asked (pool.ts). */
  get workersRestarted(): number {
    return this.pool.restarts;
  }

  /** Query workers running now: the pool's size, plus substituted helpers finishing their ranges (pool.ts `substitute`). */
  get workersRunning(): number {
    return this.pool.running;
  }

  close(): void {
    this.pool.close();
    this.stripes.close();
    this.versionDb.close();
  }

  async describe(tables: readonly { config: TableConfig; index: number }[]): Promise<Described> {
    const db = openReadOnly(this.dbPath);
    try {
      return describeTables(db, tables);
    } finally {
      db.close();
    }
  }

  /** The file opens and answers on a connection of its own; a writer holding its lock counts as up (queries wait for it). */
  async ping(): Promise<void> {
    let db;
    try {
      db = openReadOnly(this.dbPath);
      db.query("SELECT count(*) FROM sqlite_schema").get();
    } catch (error) {
      if (isBusy(error)) return;
      throw new Error(`the database file does not open or answer: ${(error as Error).message}`);
    } finally {
      db?.close();
    }
  }

  /** SQLite's `PRAGMA data_version`: it changes whenever another connection has committed to the file. */
  dataVersion(): bigint | null {
    const version = this.version();
    return version === null ? null : BigInt(version);
  }

  /**
   * A dashboard's sample, read at generation time on a connection of its own on this thread (the
   * operator's command, not a buyer's query: no worker and no time limit, as before any engine).
   */
  async sample(table: TableInfo, cap: number, along: string | null): Promise<TableSample> {
    const db = openReadOnly(this.dbPath);
    try {
      return sampleSqliteTable(db, table, cap, along);
    } finally {
      db.close();
    }
  }

  async scan(table: TableInfo, misfit: (found: StoredMisfit) => void): Promise<{ rows: number }> {
    return scanSqliteTable(this.dbPath, table, misfit);
  }

  /** SQLite runs the validated text itself: what can fail on a value is what validation found. */
  check(query: ValidatedQuery): { failsOnData: string | null } {
    return { failsOnData: query.failsOnData };
  }

  /**
   * Whether the query is a provably small read, cheap whatever the data: over a table (or a view
   * that only picks columns of one table, view-shape.ts) with no WHERE and no ORDER BY, SQLite reads
   * at most LIMIT + OFFSET rows and stops, with no expression evaluated per row.
   */
  isSmall(query: ValidatedQuery): boolean {
    if (!query.table.limitBounded || query.filtered || query.ordered || query.limit === null) return false;
    const rows = query.limit + (query.offset ?? 0);
    return rows <= SMALL_MAX_ROWS && rows * query.columns.length <= SMALL_MAX_CELLS && query.limit <= this.limits.maxRows;
  }

  /**
   * Number of rows the query returns, without materialising them. Counts are cached by query text
   * while the data is unchanged (results/count-cache.ts), so repeated quotes do not rescan.
   */
  async count(query: ValidatedQuery): Promise<number> {
    // A WHERE that reads the clock counts other rows a second later with the same data.
    if (query.readsClock) return this.countOnWorker(query);
    return this.counts.count(query.sql, () => this.countOnWorker(query));
  }

  private async countOnWorker(query: ValidatedQuery): Promise<number> {
    const slot = await this.pool.acquire(this.limits.queryTimeoutMs, this.lanes.laneOf(query));
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      const timer = new TimeBudget(this.limits.queryTimeoutMs, () => {
        this.pool.replace(slot);
        reject(timeLimitError(this.limits.queryTimeoutMs));
      });
      slot.onMessage = (msg) => {
        if (msg.id !== id) return;
        timer.stop();
        this.pool.release(slot);
        if (msg.type === "count") resolve(msg.rows);
        else if (msg.type === "error") reject(workerError(msg));
      };
      timer.start();
      slot.worker.postMessage({ type: "count", id, sql: countSql(query) } satisfies ToWorker);
    });
  }

  async read(query: ValidatedQuery, format: OutputFormat, options: ReadOptions): Promise<QueryResult> {
    const { streamed, maxBytes, sending } = options;
    const slot = await this.pool.acquire(this.limits.queryTimeoutMs, this.lanes.laneOf(query));
    // A free query that waited for its worker while others' answers filled the budget
    // (results/executor.ts `stream`): not read only to be refused once complete.
    if (streamed && sending.unsent.full) {
      this.pool.release(slot);
      throw new ServerBusyError(BUSY_MESSAGE, BUSY_RETRY_SECONDS);
    }
    const job = { query, limits: this.limits, countFirst: streamed, format: format.name, sending, maxBytes };
    const run = (worker: WorkerSlot) => new RunningQuery(this.pool, worker, this.nextId++, job).started;
    // Only a streamed result in a format whose batches can be joined may be read by two workers
    // (formats/registry.ts). A result read whole (a paid or capped answer) is read by one: its
    // batches, and so its bytes and digest, then depend only on its rows (ReadOptions.streamed).
    const plan = streamed && format.concatenable && maxBytes === null ? this.stripes.plan(query) : null;
    if (plan === null) return run(slot);
    return new StripedScan({
      pool: this.pool,
      first: slot,
      id: this.nextId++,
      query,
      plan,
      maxRows: this.limits.maxRows,
      queryTimeoutMs: this.limits.queryTimeoutMs,
      fallback: run,
      onSplit: () => this.stats.splitScans++,
      onExactRead: () => this.stats.exactRangeReads++,
      onRangeRead: () => this.stats.rangesRead++,
      onHelperSubstituted: () => this.stats.helpersSubstituted++,
      onHelperAskedBack: () => this.stats.helpersAskedBack++,
      onPartsKept: (parts) => (this.stats.mostPartsKept = Math.max(this.stats.mostPartsKept, parts)),
      helperReturnMs: this.limits.helperReturnMs,
      sending,
      format,
    }).started;
  }
}

/** What one worker run needs besides its worker. */
interface QueryJob {
  query: ValidatedQuery;
  limits: SqliteLimits;
  /** Count before the scan (a streamed result); false when the whole result is kept anyway. */
  countFirst: boolean;
  /** The output format's name (formats/registry.ts). */
  format: string;
  sending: SendingOptions;
  /** A transport's cap (RunJob.maxBytes), or null. */
  maxBytes: number | null;
}

class RunningQuery extends ResultStream {
  private inFlight = 0;
  private readonly timer: TimeBudget;
  private readonly query: ValidatedQuery;

  constructor(
    private readonly pool: WorkerPool,
    private readonly slot: WorkerSlot,
    private readonly id: number,
    job: QueryJob,
  ) {
    super(job.sending);
    const { query, limits, countFirst } = job;
    this.query = query;
    this.timer = new TimeBudget(limits.queryTimeoutMs, () => {
      this.pool.replace(this.slot);
      this.fail(timeLimitError(limits.queryTimeoutMs));
    });
    slot.onMessage = (msg) => msg.id === id && this.onMessage(msg);
    // A LIMIT within max_rows already bounds the result; otherwise count first and refuse early.
    const bounded = query.limit !== null && query.limit <= limits.maxRows;
    this.timer.start();
    slot.worker.postMessage({
      type: "run",
      id,
      sql: query.runSql,
      countSql: bounded ? null : countSql(query),
      countFirst,
      boundSql: rowidSpanSql(query),
      table: query.table.name,
      columns: encoderColumns(query),
      format: job.format,
      maxRows: limits.maxRows,
      batchRows: batchRowsFor(query.columns.length),
      maxBytes: job.maxBytes,
    } satisfies ToWorker);
  }

  private onMessage(msg: FromWorker): void {
    if (msg.type === "chunk") {
      this.inFlight++;
      this.push(msg.bytes, msg.rows, () => this.ack());
      if (this.inFlight >= MAX_IN_FLIGHT) {
        // The worker is waiting for us, not working: its time does not count, and the response
        // starts (small batches of a wide select list may not reach FIRST_RESPONSE_* first).
        this.timer.pause();
        this.startStreaming();
      }
    } else if (msg.type === "done") {
      this.timer.stop();
      this.pool.release(this.slot);
      this.finish(msg.bytes, msg.rows);
    } else if (msg.type === "misfit") {
      this.slot.worker.postMessage({ type: "rowid-sql", id: this.id, sql: rowidSql(this.query) } satisfies ToWorker);
    } else if (msg.type === "error") {
      this.timer.stop();
      this.pool.release(this.slot);
      this.fail(workerError(msg));
    }
  }

  /** The response took a chunk: the worker may send one more. */
  private ack(): void {
    if (this.ended) return;
    this.slot.worker.postMessage({ type: "ack", id: this.id } satisfies ToWorker);
    this.inFlight--;
    this.timer.resume();
  }

  protected cancel(): void {
    this.timer.stop();
    this.fail(new Error("cancelled"));
    this.pool.recall(this.slot, this.id);
  }
}
