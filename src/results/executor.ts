/**
 * Runs validated queries on the worker pool and turns the worker's Arrow chunks into a
 * response body. The returned promise settles once the first 32,768 rows (or the end) have
 * arrived, so errors found early (row limit, SQL error, time limit, a bad value in those rows)
 * still become proper 4xx/5xx responses; later failures abort the stream.
 */
import { TimeBudget, timeLimitError } from "../engines/sqlite/time-budget.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";
import { countSql } from "../sql/dialect.ts";
import { rowidSql } from "../engines/sqlite/rowid.ts";
import { rowidSpanSql } from "../engines/sqlite/rowid.ts";
import { DEFAULT_FORMAT, type OutputFormat } from "../formats/registry.ts";
import type { Database } from "bun:sqlite";
import { openReadOnly } from "../engines/sqlite/catalog.ts";
import { ClientGoneError, ResultNotHeldError, ServerBusyError } from "../errors.ts";
import { CountCache } from "./count-cache.ts";
import { LaneClassifier } from "../engines/sqlite/lanes.ts";
import type { SendingOptions } from "./outgoing.ts";
import { HELD_IN_MEMORY_BYTES, HeldResult } from "./held-result.ts";
import { SpillBudget } from "./spill.ts";
import { BUSY_MESSAGE, BUSY_RETRY_SECONDS, UnsentBytes } from "./sent-body.ts";
import { InlineReader } from "../engines/sqlite/inline.ts";
import { ResultCache } from "./result-cache.ts";
import { StripePlanner } from "../engines/sqlite/stripe-plan.ts";
import { StripedScan } from "../engines/sqlite/striped.ts";
import { WorkerPool, type WorkerSlot } from "../engines/sqlite/pool.ts";
import { batchRowsFor, encoderColumns, MAX_IN_FLIGHT, type FromWorker, type ToWorker } from "../engines/sqlite/protocol.ts";
import { ResultStream, ResultTooLarge, rowsOfBody, workerError, type QueryResult } from "./result-stream.ts";

export type { QueryResult } from "./result-stream.ts";

export interface ExecuteLimits {
  maxRows: number;
  queryTimeoutMs: number;
  /** A response whose client reads nothing for this long is cut (default SEND_TIMEOUT_MS). */
  sendTimeoutMs?: number;
  /** Spill files of all responses together stay within this many MiB (default SPILL_BUDGET_MB). */
  spillBudgetMb?: number;
  /** Complete answers not yet taken by their clients stay within this many MiB (default UNSENT_BUDGET_MB). */
  unsentBudgetMb?: number;
  /** A split scan's helper asked back for an interactive query is substituted past this (default striped.ts HELPER_RETURN_MS). */
  helperReturnMs?: number;
}

/** No read for this long while a worker waits on the client: the worker finishes into a spill file. */
export const STALL_MS = 250;
const SEND_TIMEOUT_MS = 60_000;
/** Spill files of all responses together stay within this (then slow readers hold their worker). */
const SPILL_BUDGET_MB = 4_096;
const UNSENT_BUDGET_MB = 256;

/**
 * A result read whole (a paid or capped answer): complete chunks, or, past HELD_IN_MEMORY_BYTES,
 * a body read back from a spill file (held-result.ts). `release` frees it if it is not sent.
 */
export interface BufferedResult {
  result: QueryResult;
  rows: number;
  bytes: number;
  /**
   * SHA-256 (hex) of the encoded bytes: a settled payment presented again is served only the answer
   * whose digest was recorded at settlement (DESIGN.md §17). A result read whole comes from one
   * worker, never a split scan, so the same rows encode to the same bytes however they were read.
   */
  digest: string;
  release(): void;
}

export class QueryExecutor {
  private nextId = 1;
  private readonly pool: WorkerPool;
  private readonly inline: InlineReader;
  private readonly stripes: StripePlanner;
  private readonly versionDb: Database;
  private readonly counts: CountCache;
  /** How responses wait for their clients: spill files, unsent complete answers, the send timeout. */
  readonly sending: SendingOptions;
  private readonly lanes: LaneClassifier;
  private readonly results = new ResultCache();
  /**
   * For operators and tests: scans of a whole table read by two workers at once (and the ranges
   * their workers have read), the helpers substituted by a fresh worker for an interactive query,
   * the most parts of wide ranges one split scan has kept at once for a later range (striped.ts),
   * and results answered from the result cache (result-cache.ts).
   */
  readonly stats = { splitScans: 0, rangesRead: 0, exactRangeReads: 0, resultCacheHits: 0, helpersAskedBack: 0, helpersSubstituted: 0, mostPartsKept: 0 };

  /** Queries with a WHERE tried on the HTTP thread under its budget, and those that overran (inline.ts). */
  get inlineStats(): Readonly<{ budgetedRuns: number; overruns: number }> {
    return this.inline.stats;
  }

  constructor(
    dbPath: string,
    private readonly limits: ExecuteLimits,
    workers = Math.max(2, navigator.hardwareConcurrency),
  ) {
    this.pool = new WorkerPool(dbPath, workers, limits.queryTimeoutMs);
    this.inline = new InlineReader(dbPath, limits.maxRows);
    this.stripes = new StripePlanner(openReadOnly(dbPath));
    this.sending = {
      stallMs: STALL_MS,
      sendTimeoutMs: limits.sendTimeoutMs ?? SEND_TIMEOUT_MS,
      budget: new SpillBudget((limits.spillBudgetMb ?? SPILL_BUDGET_MB) * 1024 ** 2),
      unsent: new UnsentBytes((limits.unsentBudgetMb ?? UNSENT_BUDGET_MB) * 1024 ** 2),
    };
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

  /** Query workers running now: the pool's size, plus substituted helpers finishing their ranges (pool.ts `substitute`). */
  get workersRunning(): number {
    return this.pool.running;
  }

  /** Bytes of small results kept to answer repeated queries (result-cache.ts), for operators. */
  get resultCacheBytes(): number {
    return this.results.bytes;
  }

  /** Bytes of stalled readers' responses waiting in spill files (outgoing.ts), for operators. */
  get spillBytes(): number {
    return this.sending.budget.usedBytes;
  }

  /** Bytes written to spill files since start. */
  get spilledBytes(): number {
    return this.sending.budget.spilledBytes;
  }

  close(): void {
    this.pool.close();
    this.inline.close();
    this.stripes.close();
    this.versionDb.close();
  }

  /** Whether the query is a provably small read (see inline.ts): cheap whatever the data. */
  isSmall(query: ValidatedQuery): boolean {
    return this.inline.eligible(query);
  }

  /** The result cache's answer for this query, if it has one at this data version. */
  private kept(query: ValidatedQuery, format: OutputFormat, version: bigint | null): QueryResult | null {
    const result = this.results.get(query, format, version);
    if (result !== null) this.stats.resultCacheHits++;
    return result;
  }

  /** A small read done on this thread (see inline.ts), or null for the worker pool. */
  private readInline(query: ValidatedQuery, format: OutputFormat): QueryResult | null {
    const small = this.inline.worthTrying(query) ? this.inline.read(query, format) : null;
    return small === null ? null : { complete: small.chunks, rows: small.rows };
  }

  /**
   * Number of rows the query returns, without materialising them. Counts are cached by query text
   * while the data is unchanged (count-cache.ts), so repeated quotes do not rescan.
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

  /** The result of a query known to be empty: its schema (or header) and no rows (no read needed). */
  empty(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT): QueryResult {
    const encoder = format.create(encoderColumns(query));
    return { complete: [encoder.head(), encoder.end()], rows: 0 };
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

  /** Streams the result. Resolves when the first rows are ready (FIRST_RESPONSE_ROWS); rejects on early failure. */
  async stream(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT): Promise<QueryResult> {
    // Answers already wait for clients that do not read them up to the budget: a free query is not
    // read only to be refused once complete (sent-body.ts).
    if (this.sending.unsent.full) throw new ServerBusyError(BUSY_MESSAGE, BUSY_RETRY_SECONDS);
    const version = this.inline.dataVersion();
    const result = this.kept(query, format, version) ?? this.readInline(query, format) ?? (await this.start(query, true, format));
    return "complete" in result ? this.results.put(query, format, version, result) : result;
  }

  /**
   * Runs the query to the end and keeps the bytes (priced per row before delivery). Nothing is
   * sent before the end, so a result over max_rows needs no count first: the scan finds it. Null
   * once the result is found to be over `maxBytes` (a transport's cap): the read is stopped there.
   * Once `signal` is aborted (the client went away) the read stops and `ClientGoneError` is thrown:
   * nobody would receive what is held, and a paid result is only held for its buyer.
   */
  async collect(query: ValidatedQuery, format: OutputFormat = DEFAULT_FORMAT, maxBytes = Number.POSITIVE_INFINITY, signal?: AbortSignal): Promise<BufferedResult | null> {
    if (signal?.aborted) throw new ClientGoneError();
    const version = this.inline.dataVersion();
    const capped = Number.isFinite(maxBytes) ? maxBytes : null;
    let result: QueryResult;
    try {
      result = this.kept(query, format, version) ?? this.readInline(query, format) ?? (await this.start(query, false, format, capped));
    } catch (error) {
      // The worker stopped at the cap: the values alone were over it.
      if (error instanceof ResultTooLarge) return null;
      throw error;
    }
    let bytes = 0;
    const digest = new Bun.CryptoHasher("sha256");
    if ("complete" in result) {
      bytes = result.complete.reduce((sum, chunk) => sum + chunk.byteLength, 0);
      for (const chunk of result.complete) digest.update(chunk);
    } else {
      // A capped read is small; an uncapped one (a paid answer) waits for its settlement, mostly on disk.
      const held = new HeldResult(this.sending, Number.isFinite(maxBytes) ? Number.POSITIVE_INFINITY : HELD_IN_MEMORY_BYTES);
      try {
        for await (const chunk of result.body) {
          if (signal?.aborted) throw new ClientGoneError();
          // Leaving the loop (the catch below releases it) stops the read: nothing is settled.
          if (!held.add(chunk)) throw new ResultNotHeldError();
          bytes += chunk.byteLength;
          digest.update(chunk);
          // Leaving the loop cancels the body, which stops its workers.
          if (bytes > maxBytes) {
            held.release();
            return null;
          }
        }
        await held.ready();
      } catch (error) {
        held.release();
        throw error;
      }
      const rows = rowsOfBody(result.body) ?? 0;
      if (held.spilled) {
        // The body, and with it its send timeout, is made when the answer is sent: after settlement.
        let body: QueryResult | null = null;
        return {
          get result() {
            return (body ??= { body: held.body(rows) });
          },
          rows,
          bytes,
          digest: digest.digest("hex"),
          release: () => held.release(),
        };
      }
      result = { complete: held.chunks, rows };
      held.release();
    }
    if (bytes > maxBytes) return null;
    const kept = this.results.put(query, format, version, result);
    return { result: kept, rows: kept.rows, bytes, digest: digest.digest("hex"), release: () => {} };
  }

  /** `maxBytes`: a transport's cap, which the worker stops at (RunJob.maxBytes). */
  private async start(query: ValidatedQuery, countFirst: boolean, format: OutputFormat, maxBytes: number | null = null): Promise<QueryResult> {
    const slot = await this.pool.acquire(this.limits.queryTimeoutMs, this.lanes.laneOf(query));
    // A free query that waited for its worker while others' answers filled the budget (see `stream`).
    if (countFirst && this.sending.unsent.full) {
      this.pool.release(slot);
      throw new ServerBusyError(BUSY_MESSAGE, BUSY_RETRY_SECONDS);
    }
    const job = { query, limits: this.limits, countFirst, format: format.name, sending: this.sending, maxBytes };
    const run = (worker: WorkerSlot) => new RunningQuery(this.pool, worker, this.nextId++, job).started;
    // Only a streamed result in a format whose batches can be joined may be read by two workers
    // (formats/registry.ts). A result read whole (a paid or capped answer) is read by one: its
    // batches, and so its bytes and digest, then depend only on its rows (BufferedResult).
    const plan = countFirst && format.concatenable && maxBytes === null ? this.stripes.plan(query) : null;
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
      sending: this.sending,
      format,
    }).started;
  }
}

/** What one worker run needs besides its worker. */
interface QueryJob {
  query: ValidatedQuery;
  limits: ExecuteLimits;
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
