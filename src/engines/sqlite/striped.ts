/**
 * A scan of a whole table split across two workers. `SELECT columns FROM table [WHERE …]`, with no
 * ORDER BY or LIMIT, that SQLite answers by scanning the table in rowid order (no index), is read
 * range by range: rowids [min, min + R − 1], [min + R, min + 2R − 1], … up to max go to the
 * workers as they free up, each range read with the query's own WHERE (engines/sqlite/rowid.ts), and the
 * batches go to the response in range order, so the stream holds the rows a single scan returns,
 * in its order. A WHERE reads every row either way; it only makes some ranges small or empty.
 *
 * One snapshot: the first worker opens its read transaction and takes the shared lock before the
 * second opens its own. On a rollback-journal file no write can commit while a shared lock is
 * held, so both read the same database; a WAL file allows it, so WAL files get one worker. The
 * joining worker does not wait for a writer: a writer waiting for the first worker's lock blocks
 * new readers, and would hold the second worker until the end of the very scan it should help.
 */
import type { FormatEncoder } from "../../formats/encoder.ts";
import type { OutputFormat } from "../../formats/registry.ts";
import type { ValidatedQuery } from "../../sql/dialect.ts";
import type { WorkerPool, WorkerSlot } from "./pool.ts";
import { encoderColumns, type FromWorker, type StripeJob, type ToWorker } from "./protocol.ts";
import { KeptParts, type Part } from "./kept-parts.ts";
import type { SendingOptions } from "../../results/outgoing.ts";
import { ResultStream, workerError, type QueryResult } from "../../results/result-stream.ts";
import { RANGE_ROWIDS, type StripePlan } from "./stripe-plan.ts";
import { TimeBudget, timeLimitError } from "../../results/time-budget.ts";

/** Ranges queued at each worker, so it does not wait for the HTTP thread between two. */
const QUEUED_PER_WORKER = 2;
/** Ranges handed out but not yet taken by the response: bounds memory when the client is slow. */
const WINDOW = 8;
/**
 * How long a helper, asked back for an interactive query, may take to finish its queued ranges
 * before a fresh worker takes its place, if that query still waits: a fresh worker is ready in
 * ~80 ms, so waiting longer than this for a costly WHERE, or for a client reading wide rows
 * slowly, would not pay.
 */
export const HELPER_RETURN_MS = 25;

export interface StripedScanOptions {
  pool: WorkerPool;
  first: WorkerSlot;
  id: number;
  query: ValidatedQuery;
  plan: StripePlan;
  maxRows: number;
  queryTimeoutMs: number;
  /** The ordinary one-worker run on `first`, for a table too large to prove within max_rows. */
  fallback: (slot: WorkerSlot) => Promise<QueryResult>;
  /** A second worker joined the scan. */
  onSplit?: () => void;
  /** A worker finished reading a range. */
  onRangeRead?: () => void;
  /** A fresh worker took a helper's place for an interactive query (`substituteHelper`). */
  onHelperSubstituted?: () => void;
  /** Parts of wide ranges kept at once for a later range, each time one is kept. */
  onPartsKept?: (parts: number) => void;
  /** A lent helper was asked back for an interactive query (pool.ts `reclaim`). */
  onHelperAskedBack?: () => void;
  /** How long a helper asked back has to finish its ranges before a fresh worker takes its place (default HELPER_RETURN_MS). */
  helperReturnMs?: number;
  /** How a client that stops reading is handled (outgoing.ts). */
  sending?: SendingOptions;
  /** A concatenable output format: each worker encodes its ranges, this side the head and end. */
  format: OutputFormat;
}

export class StripedScan extends ResultStream {
  private readonly timer: TimeBudget;
  /** Every worker this scan holds, joined or still opening its transaction. */
  private readonly held = new Set<WorkerSlot>();
  /** The workers reading ranges, with the ranges (by sequence number) each has queued, in order. */
  private readonly queued = new Map<WorkerSlot, number[]>();
  /** Helpers asked back, each substituted if it is not back in time while a query waits (`giveBack`). */
  private readonly returnTimers = new Map<WorkerSlot, ReturnType<typeof setTimeout>>();
  /** A lent helper the pool asked back: it gets no new ranges and leaves once its queue is empty. */
  private readonly returning = new Set<WorkerSlot>();
  private readonly arrived = new Map<number, { bytes: Uint8Array[]; rows: number }>();
  /** Parts of wide ranges not next in order yet, and each worker's parts in flight. */
  private readonly parts = new KeptParts();
  private bounds: { min: bigint; max: bigint } | null = null;
  private ranges = 0;
  private nextRange = 0;
  private nextToQueue = 0;
  private taken = 0;
  private rows = 0;
  private readonly columns;
  private readonly encoder: FormatEncoder;

  constructor(private readonly o: StripedScanOptions) {
    super(o.sending ?? null);
    this.columns = encoderColumns(o.query);
    this.encoder = o.format.create(this.columns);
    this.timer = new TimeBudget(o.queryTimeoutMs, () => this.abandon(timeLimitError(o.queryTimeoutMs)));
    this.timer.start();
    this.begin(o.first, true);
  }

  private begin(slot: WorkerSlot, wait: boolean): void {
    this.held.add(slot);
    slot.onMessage = (msg) => msg.id === this.o.id && this.onMessage(slot, msg);
    slot.worker.postMessage({
      type: "stripe",
      id: this.o.id,
      rangeSql: this.o.plan.rangeSql,
      boundsSql: this.o.plan.boundsSql,
      wait,
      table: this.o.query.table.name,
      columns: this.columns,
      format: this.o.format.name,
    } satisfies StripeJob);
  }

  private onMessage(slot: WorkerSlot, msg: FromWorker): void {
    if (msg.type === "stripe-busy") {
      this.held.delete(slot);
      this.o.pool.release(slot);
    } else if (this.ended) {
      // A worker that was still opening its transaction when the scan ended.
      if (msg.type === "stripe-ready") this.endAndRelease(slot);
    } else if (msg.type === "stripe-ready") {
      if (slot === this.o.first) this.firstReady(msg.min, msg.max);
      else this.joined(slot, msg.min, msg.max);
    } else if (msg.type === "range-part") {
      this.partArrived({ slot, bytes: msg.bytes, rows: msg.rows, acked: false }, msg.seq);
    } else if (msg.type === "range-done") {
      this.queued.get(slot)!.shift();
      this.o.onRangeRead?.();
      this.arrived.set(msg.seq, { bytes: msg.bytes, rows: msg.rows });
      this.queueArrived();
      if (this.ended) return;
      if (this.returning.has(slot) && this.queued.get(slot)!.length === 0) this.retire(slot);
      this.handOut();
    } else if (msg.type === "misfit") {
      slot.worker.postMessage({ type: "rowid-sql", id: this.o.id, sql: this.o.plan.rangeWithRowid() } satisfies ToWorker);
    } else if (msg.type === "error") {
      this.abandon(workerError(msg));
    }
  }

  private firstReady(min: bigint | null, max: bigint | null): void {
    const first = this.o.first;
    const span = min === null || max === null ? 0n : max - min + 1n;
    if (span > BigInt(this.o.maxRows)) {
      // Only a count can tell whether the result fits: the one-worker path does that.
      this.timer.stop();
      this.held.delete(first);
      first.worker.postMessage({ type: "stripe-end", id: this.o.id } satisfies ToWorker);
      this.handOver(this.o.fallback(first));
      return;
    }
    this.queued.set(first, []);
    this.push([this.encoder.head()], 0);
    if (min === null || max === null) return this.done([]);
    this.bounds = { min, max };
    this.ranges = Number((span + BigInt(RANGE_ROWIDS) - 1n) / BigInt(RANGE_ROWIDS));
    if (this.ranges > 1) {
      let helper: WorkerSlot | null = null;
      helper = this.o.pool.lend(() => helper !== null && this.giveBack(helper));
      if (helper) this.begin(helper, false);
    }
    this.handOut();
  }

  private joined(slot: WorkerSlot, min: bigint | null, max: bigint | null): void {
    // Same snapshot, same bounds (see the top of this file); anything else and it stays out.
    // A helper asked back before it joined goes back too (with its return timer, if one was set).
    if (min !== this.bounds?.min || max !== this.bounds.max || this.returning.has(slot)) {
      this.retire(slot);
      return;
    }
    this.queued.set(slot, []);
    this.o.onSplit?.();
    this.handOut();
  }

  /**
   * The pool wants the lent helper back for an interactive query: it finishes its queued ranges
   * (at most QUEUED_PER_WORKER) and leaves. Usually that is a few milliseconds. A costly WHERE
   * (whatever it costs per row, times 4,096 rows), or wide rows sent in parts to a client reading
   * slowly, can make it much longer: a helper not back within HELPER_RETURN_MS, while the
   * interactive query still waits, is substituted (`substituteHelper`).
   */
  private giveBack(slot: WorkerSlot): void {
    if (this.ended || !this.held.has(slot)) return;
    this.o.onHelperAskedBack?.();
    this.returning.add(slot);
    const ranges = this.queued.get(slot);
    if (ranges !== undefined && ranges.length === 0) {
      this.retire(slot);
      this.handOut();
    } else {
      this.returnTimers.set(slot, setTimeout(() => this.substituteHelper(slot), this.o.helperReturnMs ?? HELPER_RETURN_MS));
    }
  }

  private clearReturnTimers(): void {
    for (const timer of this.returnTimers.values()) clearTimeout(timer);
    this.returnTimers.clear();
  }

  /**
   * The helper asked back is still reading: a fresh worker takes its place in the pool for the
   * interactive query (pool.ts `substitute`), and the helper finishes the ranges it holds, in
   * order with the others' (parts included), then leaves the pool (`retire`). Nothing is read
   * twice and the scan never waits for a range nobody reads. Only while an interactive query
   * still waits: one that got another worker meanwhile, or gave up, needs no fresh worker
   * (checked again every HELPER_RETURN_MS, for a query that comes to wait later).
   */
  private substituteHelper(slot: WorkerSlot): void {
    this.returnTimers.delete(slot);
    if (this.ended || !this.held.has(slot) || !this.returning.has(slot)) return;
    if (!this.o.pool.interactiveWaiting()) {
      this.returnTimers.set(slot, setTimeout(() => this.substituteHelper(slot), this.o.helperReturnMs ?? HELPER_RETURN_MS));
      return;
    }
    this.o.pool.substitute(slot);
    this.o.onHelperSubstituted?.();
  }

  private retire(slot: WorkerSlot): void {
    clearTimeout(this.returnTimers.get(slot));
    this.returnTimers.delete(slot);
    this.queued.delete(slot);
    this.parts.forget(slot);
    this.returning.delete(slot);
    this.held.delete(slot);
    this.endAndRelease(slot);
  }

  /** Gives each worker ranges up to its queue, within the window of ranges the response has not taken. */
  private handOut(): void {
    const { min, max } = this.bounds!;
    for (const [slot, queued] of this.queued) {
      if (this.returning.has(slot)) continue;
      while (queued.length < QUEUED_PER_WORKER) {
        const seq = this.nextSeq();
        if (seq === null) break;
        const lo = min + BigInt(seq) * BigInt(RANGE_ROWIDS);
        const last = lo + BigInt(RANGE_ROWIDS - 1);
        const hi = last < max ? last : max;
        slot.worker.postMessage({ type: "range", id: this.o.id, seq, lo, hi } satisfies ToWorker);
        queued.push(seq);
      }
    }
    this.pace();
  }

  /**
   * Every worker idle with ranges left, or held back by flow control: they wait for the client,
   * and that time does not count. If the response has not started yet (sparse rowids: fewer rows
   * than FIRST_RESPONSE_ROWS in the window), it starts now, as nothing more can be read before the
   * client reads.
   */
  private pace(): void {
    const heldBack = (slot: WorkerSlot) => this.parts.heldBack(slot);
    const waiting = [...this.queued].every(([slot, ranges]) => ranges.length === 0 || heldBack(slot));
    if (waiting && (this.nextRange < this.ranges || [...this.queued.keys()].some(heldBack))) {
      this.timer.pause();
      this.startStreaming();
    } else {
      this.timer.resume();
    }
  }

  /**
   * A part of a wide range: sent on if its range is next in order, else kept until it is. Kept
   * parts count against their worker's MAX_IN_FLIGHT, so a worker reading ahead waits for the
   * range before its own. Some worker is reading that range: each worker's ranges are queued in
   * order and none is taken from it, so the next range not yet arrived heads some worker's queue.
   */
  private partArrived(part: Part, seq: number): void {
    this.parts.arrived(part);
    if (seq === this.nextToQueue) this.pushPart(part);
    else this.o.onPartsKept?.(this.parts.keep(seq, part));
    if (!this.ended) this.pace();
  }

  private pushPart(part: Part): void {
    this.rows += part.rows;
    this.push(part.bytes, part.rows, () => this.consumed(part));
  }

  /** The part was consumed by the response: it no longer holds its worker back. */
  private consumed(part: Part): void {
    if (this.ended || !this.parts.settle(part)) return;
    part.slot.worker.postMessage({ type: "ack", id: this.o.id } satisfies ToWorker);
    this.pace();
  }

  /** The next range to read, within the window. */
  private nextSeq(): number | null {
    if (this.nextRange < this.ranges && this.nextRange - this.taken < WINDOW) return this.nextRange++;
    return null;
  }

  /** Moves the batches that are next in range order to the response: a range's kept parts, then its last batch. */
  private queueArrived(): void {
    for (;;) {
      for (const part of this.parts.take(this.nextToQueue)) this.pushPart(part);
      const next = this.arrived.get(this.nextToQueue);
      if (next === undefined) break;
      this.arrived.delete(this.nextToQueue);
      this.nextToQueue++;
      this.rows += next.rows;
      if (this.nextToQueue === this.ranges) return this.done(next.bytes);
      // A range without rows has nothing for the client: the window moves on without it.
      if (next.bytes.length === 0) this.taken++;
      else this.push(next.bytes, next.rows, () => this.took());
    }
  }

  private done(lastBytes: Uint8Array[]): void {
    this.timer.stop();
    this.clearReturnTimers();
    for (const slot of this.held) this.endAndRelease(slot);
    this.held.clear();
    this.finish([...lastBytes, this.encoder.end()], this.rows);
  }

  /** The response took one range's batch: the window moves on. */
  private took(): void {
    this.taken++;
    if (!this.ended) this.handOut();
  }

  private endAndRelease(slot: WorkerSlot): void {
    slot.worker.postMessage({ type: "stripe-end", id: this.o.id } satisfies ToWorker);
    this.o.pool.release(slot);
  }

  /**
   * Failure or time limit: the workers may be mid-range, so they are replaced. A client gone: they
   * are asked to stop (pool.ts `recall`), and replaced only if they do not.
   */
  private abandon(error: Error, stopWorker = (slot: WorkerSlot) => this.o.pool.replace(slot)): void {
    this.timer.stop();
    this.clearReturnTimers();
    for (const slot of this.held) stopWorker(slot);
    this.held.clear();
    this.fail(error);
  }

  protected cancel(): void {
    this.abandon(new Error("cancelled"), (slot) => this.o.pool.recall(slot, this.o.id));
  }
}
