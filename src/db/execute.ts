/**
 * Runs validated queries on the worker pool and turns the worker's Arrow chunks into a
 * response body. The returned promise settles once the first 32,768 rows (or the end) have
 * arrived, so errors found early (row limit, SQL error, time limit, a bad value in those rows)
 * still become proper 4xx/5xx responses; later failures abort the stream.
 */
import { BadRequestError, ServerError, ValueDoesNotFitError } from "../errors.ts";
import { TimeBudget, timeLimitError } from "./time-budget.ts";
import type { ValidatedQuery } from "../sql/dialect.ts";
import { countSql, rowidSql } from "../sql/dialect.ts";
import { sameName } from "../sql/names.ts";
import { InlineReader } from "./inline.ts";
import { WorkerPool, type WorkerSlot } from "./pool.ts";
import { BATCH_ROWS, FIRST_RESPONSE_ROWS, MAX_IN_FLIGHT, type FromWorker, type ToWorker } from "./protocol.ts";

export interface ExecuteLimits {
  maxRows: number;
  queryTimeoutMs: number;
}

/**
 * A result whose end had arrived before the response started (small results) is `complete`: sent
 * as one buffer with its Content-Length, cheaper than a stream for the server and the client.
 * Otherwise it is the Arrow IPC stream, chunk by chunk.
 */
export type QueryResult = { complete: Uint8Array[]; rows: number } | { body: ReadableStream<Uint8Array> };

export interface BufferedResult {
  chunks: Uint8Array[];
  rows: number;
  bytes: number;
}


export class QueryExecutor {
  private nextId = 1;
  private readonly pool: WorkerPool;
  private readonly inline: InlineReader;

  constructor(
    dbPath: string,
    private readonly limits: ExecuteLimits,
    workers = Math.max(2, navigator.hardwareConcurrency),
  ) {
    this.pool = new WorkerPool(dbPath, workers, limits.queryTimeoutMs);
    this.inline = new InlineReader(dbPath, limits.maxRows);
  }

  close(): void {
    this.pool.close();
    this.inline.close();
  }

  /** A provably small read done on this thread (see inline.ts), or null for the worker pool. */
  private readInline(query: ValidatedQuery) {
    return this.inline.eligible(query) ? this.inline.read(query) : null;
  }

  /** Number of rows the query returns, without materialising them. */
  async count(query: ValidatedQuery): Promise<number> {
    const small = this.readInline(query);
    if (small) return small.rows;
    const slot = await this.pool.acquire(this.limits.queryTimeoutMs);
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
        else if (msg.type === "error") reject(toError(msg));
      };
      timer.start();
      slot.worker.postMessage({ type: "count", id, sql: countSql(query) } satisfies ToWorker);
    });
  }

  /** Streams the result. Resolves when the first rows are ready (FIRST_RESPONSE_ROWS); rejects on early failure. */
  async stream(query: ValidatedQuery): Promise<QueryResult> {
    const small = this.readInline(query);
    if (small) return { complete: small.chunks, rows: small.rows };
    return this.start(query, true);
  }

  /**
   * Runs the query to the end and keeps the bytes (priced per row before delivery). Nothing is
   * sent before the end, so a result over max_rows needs no count first: the scan finds it.
   */
  async collect(query: ValidatedQuery): Promise<BufferedResult> {
    const small = this.readInline(query);
    if (small) return { chunks: small.chunks, rows: small.rows, bytes: small.chunks.reduce((sum, c) => sum + c.byteLength, 0) };
    const result = await this.start(query, false);
    let chunks: Uint8Array[];
    let rows: number;
    if ("complete" in result) {
      ({ complete: chunks, rows } = result);
    } else {
      chunks = [];
      for await (const chunk of result.body) chunks.push(chunk);
      rows = rowsOf.get(result.body) ?? 0;
    }
    const bytes = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    return { chunks, rows, bytes };
  }

  private async start(query: ValidatedQuery, countFirst: boolean): Promise<QueryResult> {
    const slot = await this.pool.acquire(this.limits.queryTimeoutMs);
    return new RunningQuery(this.pool, slot, this.nextId++, query, this.limits, countFirst).started;
  }
}

/** Row counts of streamed bodies once they end, so `collect` can report them. */
const rowsOf = new WeakMap<ReadableStream<Uint8Array>, number>();

/** One message from the worker: its IPC chunks, and whether the worker waits for its ack. */
interface QueuedMessage {
  bytes: Uint8Array[];
  acked: boolean;
}

class RunningQuery {
  readonly started: Promise<QueryResult>;
  private readonly queue: QueuedMessage[] = [];
  private wake: (() => void) | null = null;
  private finished = false;
  private failure: Error | null = null;
  private inFlight = 0;
  private rowsSeen = 0;
  private readonly timer: TimeBudget;
  private resolveStart!: (result: QueryResult) => void;
  private rejectStart!: (error: Error) => void;
  private startSettled = false;
  private readonly body: ReadableStream<Uint8Array>;

  constructor(
    private readonly pool: WorkerPool,
    private readonly slot: WorkerSlot,
    private readonly id: number,
    private readonly query: ValidatedQuery,
    limits: ExecuteLimits,
    countFirst: boolean,
  ) {
    this.started = new Promise((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    this.timer = new TimeBudget(limits.queryTimeoutMs, () => {
      this.pool.replace(this.slot);
      this.fail(timeLimitError(limits.queryTimeoutMs));
    });
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.pull(controller),
        cancel: () => this.cancel(),
      },
      { highWaterMark: 0 },
    );
    slot.onMessage = (msg) => msg.id === id && this.onMessage(msg);
    // A LIMIT within max_rows already bounds the result; otherwise count first and refuse early.
    const bounded = query.limit !== null && query.limit <= limits.maxRows;
    this.timer.start();
    slot.worker.postMessage({
      type: "run",
      id,
      sql: query.sql,
      countSql: bounded ? null : countSql(query),
      countFirst,
      boundSql: rowidSpanSql(query),
      table: query.table.name,
      columns: query.columns.map((c) => ({ name: c.name, kind: c.column.kind, nullable: c.column.nullable })),
      maxRows: limits.maxRows,
      batchRows: BATCH_ROWS,
    } satisfies ToWorker);
  }

  private onMessage(msg: FromWorker): void {
    if (msg.type === "chunk") {
      this.queue.push({ bytes: msg.bytes, acked: true });
      this.inFlight++;
      // The worker is waiting for us, not working: its time does not count.
      if (this.inFlight >= MAX_IN_FLIGHT) this.timer.pause();
      this.rowsSeen += msg.rows;
      if (this.rowsSeen >= FIRST_RESPONSE_ROWS) this.startOk();
      this.wake?.();
    } else if (msg.type === "done") {
      this.timer.stop();
      this.finished = true;
      this.queue.push({ bytes: msg.bytes, acked: false });
      rowsOf.set(this.body, msg.rows);
      this.pool.release(this.slot);
      // Ended before the response started: the whole result goes out as one buffer, the stream unread.
      if (!this.startSettled) this.settleStart({ complete: this.queue.flatMap((queued) => queued.bytes), rows: msg.rows });
      this.wake?.();
    } else if (msg.type === "misfit") {
      this.slot.worker.postMessage({ type: "rowid-sql", id: this.id, sql: rowidSql(this.query) } satisfies ToWorker);
    } else if (msg.type === "error") {
      this.timer.stop();
      this.pool.release(this.slot);
      this.fail(toError(msg));
    }
  }

  private startOk(): void {
    this.settleStart({ body: this.body });
  }

  private settleStart(result: QueryResult): void {
    if (this.startSettled) return;
    this.startSettled = true;
    this.resolveStart(result);
  }

  private fail(error: Error): void {
    this.failure = error;
    if (!this.startSettled) {
      this.startSettled = true;
      this.rejectStart(error);
    }
    this.wake?.();
  }

  private async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (this.queue.length === 0 && !this.finished && !this.failure) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    const message = this.queue.shift();
    if (message) {
      for (const chunk of message.bytes) controller.enqueue(chunk);
      if (message.acked && !this.finished && !this.failure) {
        this.slot.worker.postMessage({ type: "ack", id: this.id } satisfies ToWorker);
        this.inFlight--;
        this.timer.resume();
      }
    } else if (this.failure) {
      controller.error(this.failure);
    } else {
      controller.close();
    }
  }

  /** The client went away: stop the query instead of scanning for nobody. */
  private cancel(): void {
    if (this.finished || this.failure) return;
    this.timer.stop();
    this.failure = new Error("cancelled");
    this.pool.replace(this.slot);
  }
}

/** SQLite's three names for the rowid; a real column of that name hides it (as in sql/rowid.ts). */
const ROWID_NAMES = ["_rowid_", "rowid", "oid"] as const;

/**
 * max(rowid) − min(rowid) + 1 of the query's table: rowids are distinct integers, and a query on
 * one table returns at most its rows, so this bounds the result. Each side is one b-tree lookup
 * (SQLite's min/max optimisation applies to a lone min() or max()). Null for views and WITHOUT
 * ROWID tables.
 */
function rowidSpanSql(query: ValidatedQuery): string | null {
  if (!query.table.hasRowid) return null;
  const rowid = ROWID_NAMES.find((name) => !query.table.columns.some((c) => sameName(c.name, name)));
  if (rowid === undefined) return null;
  const table = `"${query.table.name.replaceAll('"', '""')}"`;
  return `SELECT (SELECT max(${rowid}) FROM ${table}) - (SELECT min(${rowid}) FROM ${table}) + 1`;
}

function toError(msg: Extract<FromWorker, { type: "error" }>): Error {
  if (msg.fit) return new ValueDoesNotFitError(msg.fit.table, msg.fit.column, msg.fit.rowid, msg.fit.detail);
  return msg.status === 400 ? new BadRequestError(msg.message) : new ServerError(msg.message);
}
