/**
 * The SQLite engine (DESIGN.md §14; ARCHITECTURE.md §4, §11): counts and reads validated queries on
 * a pool of worker threads, each with its own read-only connection, under the time limit its
 * guard enforces (guard.ts); provably small reads run on the HTTP thread (inline.ts). Results are handed
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
import { InlineReader } from "./inline.ts";
import { LaneClassifier } from "./lanes.ts";
import { WorkerPool, type WorkerSlot } from "./pool.ts";
import { batchRowsFor, encoderColumns, MAX_IN_FLIGHT, type FromWorker, type ToWorker } from "./protocol.ts";
import { rowidSpanSql, rowidSql } from "./rowid.ts";
import { sampleSqliteTable } from "./sample.ts";
import { scanSqliteTable } from "./scan.ts";
import { TimeBudget, timeLimitError } from "../../results/time-budget.ts";

export interface SqliteLimits {
  maxRows: number;
  queryTimeoutMs: number;
}

export class SqliteEngine implements TableEngine {
  readonly kind = "sqlite" as const;
  private nextId = 1;
  private readonly pool: WorkerPool;
  private readonly inline: InlineReader;
  private readonly versionDb: Database;
  private readonly counts: CountCache;
  private readonly lanes: LaneClassifier;
  /** Queries with a WHERE tried on the HTTP thread under its budget, and those that overran (inline.ts). */
  get inlineStats(): Readonly<{ budgetedRuns: number; overruns: number }> {
    return this.inline.stats;
  }

  constructor(
    private readonly dbPath: string,
    private readonly limits: SqliteLimits,
    workers = Math.max(2, navigator.hardwareConcurrency),
  ) {
    this.pool = new WorkerPool(dbPath, workers, limits.queryTimeoutMs);
    this.inline = new InlineReader(dbPath, limits.maxRows);
    this.versionDb = openReadOnly(dbPath);
    this.lanes = new LaneClassifier(this.versionDb);
    const dataVersion = this.versionDb.prepare("PRAGMA data_version");
    this.counts = new CountCache(() => {
      try {
        return Number(dataVersion.values()[0]?.[0]);
      } catch {
        return null; // a writer holds the file: count without the cache
      }
    });
  }

  /** Query workers terminated and replaced: over the time limit, or not stopping when asked (pool.ts). */
  get workersRestarted(): number {
    return this.pool.restarts;
  }

  close(): void {
    this.pool.close();
    this.inline.close();
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

  /** SQLite's `PRAGMA data_version` in the small reads' snapshot (inline.ts). */
  dataVersion(): bigint | null {
    return this.inline.dataVersion();
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

  /** Whether the query is a provably small read (see inline.ts): cheap whatever the data. */
  isSmall(query: ValidatedQuery): boolean {
    return this.inline.eligible(query);
  }

  /** A small read done on this thread (see inline.ts), or null for the worker pool. */
  readNow(query: ValidatedQuery, format: OutputFormat): { chunks: Uint8Array[]; rows: number } | null {
    return this.inline.worthTrying(query) ? this.inline.read(query, format) : null;
  }

  /**
   * Number of rows the query returns, without materialising them. Counts are cached by query text
   * while the data is unchanged (results/count-cache.ts), so repeated quotes do not rescan.
   */
  async count(query: ValidatedQuery): Promise<number> {
    // A count kept at this data version costs nothing: asked before trying the HTTP thread, whose
    // try of a long count reads part of the table before handing it to a worker.
    const kept = query.readsClock ? null : this.counts.peek(query.sql);
    if (kept !== null) return kept;
    const small = this.inline.worthTrying(query) ? this.inline.count(query) : null;
    if (small !== null) return small;
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
    return new RunningQuery(this.pool, slot, this.nextId++, job).started;
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
      // Only Arrow has the exact re-read; a clock read again could see other rows; a transport's cap counts values once.
      fastNumbers: job.format === "arrow" && !query.readsClock && job.maxBytes === null,
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
