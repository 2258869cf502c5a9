/**
 * The HTTP-thread side of a query running on workers: Arrow chunks are queued as workers send
 * them and handed to the response body as it is read. `started` settles once the first
 * FIRST_RESPONSE_ROWS rows (or the end) are queued, so errors found early (row limit, SQL error,
 * time limit, a bad value in those rows) still become proper 4xx/5xx responses; later failures
 * abort the stream. Subclasses (engines/sqlite/engine.ts `RunningQuery`) drive the workers.
 */
import { BadRequestError, ServerError, TooManyRowsError, ValueDoesNotFitError } from "../errors.ts";
import { NOT_YET, OutgoingQueue, type SendingOptions } from "./outgoing.ts";
import { FIRST_RESPONSE_BYTES, FIRST_RESPONSE_ROWS, type FromWorker } from "../engines/sqlite/protocol.ts";

/**
 * A result whose end had arrived before the response started (small results) is `complete`: sent
 * as one buffer with its Content-Length, cheaper than a stream for the server and the client.
 * Otherwise it is the Arrow IPC stream, chunk by chunk.
 */
export type QueryResult = { complete: Uint8Array[]; rows: number } | { body: ReadableStream<Uint8Array> };

/** What to do when a streamed body is cut (send timeout): its response can never complete. */
const cutListeners = new WeakMap<ReadableStream<Uint8Array>, (() => void)[]>();

/**
 * Calls `listener` if `body` is cut by the send timeout. The layers around the body (the
 * per-client count, the request's event, the connection) learn it now: a client that reads
 * nothing pulls nothing, so they would otherwise see the failure only when it reads again.
 */
export function whenCut(body: ReadableStream<Uint8Array>, listener: () => void): void {
  cutListeners.set(body, [...(cutListeners.get(body) ?? []), listener]);
}

/** Row counts of streamed bodies once they end, so a buffered read can report them. */
const rowsOf = new WeakMap<ReadableStream<Uint8Array>, number>();

export function rowsOfBody(body: ReadableStream<Uint8Array>): number | undefined {
  return rowsOf.get(body);
}

/** Records the row count of a body made outside this file (held-result.ts), for `rowsOfBody`. */
export function noteRows(body: ReadableStream<Uint8Array>, rows: number): void {
  rowsOf.set(body, rows);
}

/** Tells the listeners of `whenCut` that `body` was cut by the send timeout. */
export function notifyCut(body: ReadableStream<Uint8Array>): void {
  for (const listener of cutListeners.get(body) ?? []) listener();
}

export abstract class ResultStream {
  readonly started: Promise<QueryResult>;
  protected readonly body: ReadableStream<Uint8Array>;
  private readonly queue: OutgoingQueue;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private wake: (() => void) | null = null;
  private finished = false;
  private failure: Error | null = null;
  private rowsSeen = 0;
  private bytesSeen = 0;
  private resolveStart!: (result: QueryResult) => void;
  private rejectStart!: (error: Error) => void;
  private startSettled = false;

  /** `sending`: how a client that stops reading is handled (outgoing.ts); null: held back only. */
  constructor(sending: SendingOptions | null = null) {
    this.queue = new OutgoingQueue(
      sending,
      (error) => this.cut(error),
      () => this.wake?.(),
    );
    this.started = new Promise((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.pull(controller),
        cancel: () => {
          this.queue.close();
          if (!this.ended) this.cancel();
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** The client went away before the end: stop the workers instead of scanning for nobody. */
  protected abstract cancel(): void;

  /** Finished or failed: nothing more will be queued. */
  protected get ended(): boolean {
    return this.finished || this.failure !== null;
  }

  /** `consumed` is called once the bytes are no longer the producer's concern (flow control). */
  protected push(bytes: Uint8Array[], rows: number, consumed?: () => void): void {
    this.queue.push({ bytes, consumed });
    this.rowsSeen += rows;
    for (const chunk of bytes) this.bytesSeen += chunk.byteLength;
    if (this.rowsSeen >= FIRST_RESPONSE_ROWS || this.bytesSeen >= FIRST_RESPONSE_BYTES) this.settleStart({ body: this.body });
    this.wake?.();
  }

  /** The last messages (last batch, end-of-stream marker) and the result's row count. */
  protected finish(bytes: Uint8Array[], rows: number): void {
    this.finished = true;
    this.queue.push({ bytes });
    rowsOf.set(this.body, rows);
    // Ended before the response started: the whole result goes out as one buffer, the stream unread.
    if (!this.startSettled) this.settleStart({ complete: this.queue.drainAll(), rows });
    this.wake?.();
  }

  protected fail(error: Error): void {
    this.failure = error;
    if (!this.startSettled) {
      this.startSettled = true;
      this.rejectStart(error);
    }
    this.wake?.();
  }

  /** Starts the response before FIRST_RESPONSE_ROWS rows are queued (when no more can be read first). */
  protected startStreaming(): void {
    this.settleStart({ body: this.body });
  }

  /** The result comes from another run after all (this stream's body stays unused). */
  protected handOver(result: Promise<QueryResult>): void {
    result.then(
      (settled) => this.settleStart(settled),
      (error: Error) => this.fail(error),
    );
  }

  private settleStart(result: QueryResult): void {
    if (this.startSettled) return;
    this.startSettled = true;
    if ("body" in result && result.body === this.body) this.queue.startWatching();
    this.resolveStart(result);
  }

  /** The client read nothing for the send timeout: the response is aborted and its work stopped. */
  private cut(error: Error): void {
    const running = !this.ended;
    this.fail(error);
    this.queue.close();
    this.controller?.error(error);
    if (running) this.cancel();
    notifyCut(this.body);
  }

  /**
   * Enqueues the next bytes. An entry with none is taken and skipped: a pull that enqueues nothing
   * is not called again, and the response would stall. No producer queues one today; the stream
   * must not depend on that.
   */
  private async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    this.controller = controller;
    for (;;) {
      while (this.queue.isEmpty && !this.ended) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
      const bytes = this.queue.take();
      if (bytes === NOT_YET) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      if (bytes === null) break;
      if (bytes.length === 0) continue;
      for (const chunk of bytes) controller.enqueue(chunk);
      return;
    }
    this.queue.close();
    if (this.failure) controller.error(this.failure);
    else controller.close();
  }
}

/** A read stopped at its transport's byte cap (RunJob.maxBytes): the caller refuses the answer. */
export class ResultTooLarge extends Error {}

export function workerError(msg: Extract<FromWorker, { type: "error" }>): Error {
  if (msg.tooLarge) return new ResultTooLarge(msg.message);
  if (msg.fit) return new ValueDoesNotFitError(msg.fit.table, msg.fit.column, msg.fit.rowid, msg.fit.detail);
  if (msg.tooMany) return new TooManyRowsError(msg.tooMany.rows, msg.tooMany.max);
  return msg.status === 400 ? new BadRequestError(msg.message) : new ServerError(msg.message);
}
