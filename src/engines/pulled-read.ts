/**
 * A result read in batches that its client pulls (DESIGN.md §11, §14), for the engines that read on
 * their own connections (PostgreSQL's COPY, DuckDB's streamed chunks): each batch is encoded in the
 * buyer's format and handed into the engine-neutral ResultStream as the client (or its spill file)
 * takes them. While MAX_IN_FLIGHT chunks wait for the client, the next batch is not asked for (the
 * source waits too) and the time limit is paused; a client that goes away, or the time limit,
 * closes the read (which stops the statement in the source).
 */
import { arrowSchema, ValueDoesNotFit } from "../arrow/encode.ts";
import { endOfStream, schemaMessage } from "../arrow/ipc.ts";
import { ClientGoneError, TooManyRowsError, ValueDoesNotFitError } from "../errors.ts";
import { concatBytes } from "../formats/encoder.ts";
import type { OutputFormat } from "../formats/registry.ts";
import { MAX_IN_FLIGHT } from "../results/batches.ts";
import { ResultStream, ResultTooLarge, type QueryResult } from "../results/result-stream.ts";
import { TimeBudget, timeLimitError } from "../results/time-budget.ts";
import { encoderColumns, type ValidatedQuery } from "../sql/validated.ts";
import type { ReadOptions } from "./engine.ts";
import { bytesOfValues } from "./sqlite/protocol.ts";

/** What an engine's read hands over: its batches, pulled, and how to stop it. */
export interface PulledBatches {
  /**
   * One array of values per row (as the encoders take them), and the index of the batch's first row
   * in the result; or, for an Arrow answer an engine encoded itself (postgres/copy-arrow.ts), the
   * batch's message in `arrow` and its row count in `length` (`rows` then empty).
   */
  readonly batches: AsyncIterable<PulledBatch>;
  /** Stops the read if it still runs; resolves once its connection is released. */
  close(reason?: unknown): Promise<void>;
}

export type PulledBatch = { rows: unknown[][]; firstRowIndex: number; arrow?: Uint8Array; length?: number; whole?: boolean };

/** An Arrow stream's schema message and end-of-stream marker (arrowFrame). */
export interface ArrowFrame {
  before: Uint8Array;
  after: Uint8Array;
}

/**
 * One batch's bytes (an engine's own Arrow message as it is, or the encoder's), counting its values
 * against the transport's cap (`tally.valueBytes`, up to `maxBytes`): what PulledRead sends and
 * wholeResult keeps.
 */
function encodeBatch(encoder: ReturnType<OutputFormat["create"]>, batch: PulledBatch, tally: { valueBytes: number }, maxBytes: number): Uint8Array {
  if (batch.arrow !== undefined) return batch.arrow;
  for (const row of batch.rows) tally.valueBytes += bytesOfValues(row);
  if (tally.valueBytes > maxBytes) throw new ResultTooLarge("the values passed the transport's cap");
  return encoder.batch(batch.rows, batch.firstRowIndex);
}

/** One read, encoded batch by batch into the response (results/result-stream.ts). */
export class PulledRead extends ResultStream {
  private inFlight = 0;
  private creditBack: (() => void) | null = null;
  private stopped: Error | null = null;
  private readonly timer: TimeBudget;

  constructor(
    private readonly read: PulledBatches,
    private readonly query: ValidatedQuery,
    private readonly format: OutputFormat,
    private readonly options: ReadOptions,
    private readonly limits: { maxRows: number; queryTimeoutMs: number },
    /** When the read began (performance.now()): work done before this stream (a first read of the rows) counts against the time limit. */
    started = performance.now(),
  ) {
    super(options.sending);
    const left = Math.max(1, limits.queryTimeoutMs - (performance.now() - started));
    this.timer = new TimeBudget(left, () => this.stop(timeLimitError(limits.queryTimeoutMs)));
    this.timer.start();
    void this.pump();
  }

  private stop(error: Error): void {
    if (this.stopped !== null) return;
    this.stopped = error;
    this.creditBack?.();
    void this.read.close(error);
  }

  protected cancel(): void {
    this.stop(new ClientGoneError());
  }

  /** Pushes the bytes and waits while MAX_IN_FLIGHT chunks wait for the client (its time does not count). */
  private async send(bytes: Uint8Array, rows: number): Promise<void> {
    this.inFlight++;
    this.push([bytes], rows, () => {
      this.inFlight--;
      this.creditBack?.();
    });
    if (this.inFlight < MAX_IN_FLIGHT) return;
    this.timer.pause();
    this.startStreaming();
    while (this.inFlight >= MAX_IN_FLIGHT && this.stopped === null) await new Promise<void>((resolve) => (this.creditBack = resolve));
    this.creditBack = null;
    this.timer.resume();
  }

  private async pump(): Promise<void> {
    const encoder = this.format.create(encoderColumns(this.query));
    const maxBytes = this.options.maxBytes ?? Number.POSITIVE_INFINITY;
    let rows = 0;
    const tally = { valueBytes: 0 };
    try {
      await this.send(encoder.head(), 0);
      for await (const batch of this.read.batches) {
        if (this.stopped !== null) break;
        const length = batch.length ?? batch.rows.length;
        rows += length;
        // A result read whole has no count first: the read finds the excess (as SQLite's does).
        if (rows > this.limits.maxRows) throw new TooManyRowsError(rows, this.limits.maxRows);
        await this.send(encodeBatch(encoder, batch, tally, maxBytes), length);
      }
      if (this.stopped !== null) throw this.stopped;
      this.timer.stop();
      this.finish([encoder.end()], rows);
    } catch (error) {
      this.timer.stop();
      void this.read.close(error);
      this.fail(this.stopped ?? readError(error, this.query));
    }
  }
}

/**
 * A result read whole before anything is sent (a PostgreSQL read that ended within a response's
 * first part): encoded at once into a complete answer, one buffer with its Content-Length, without
 * the stream, queue and timer a pulled read needs. The same chunks PulledRead would send; the same
 * refusals (a value that does not fit, the transport's cap on values).
 */
export function wholeResult(batches: readonly PulledBatch[], query: ValidatedQuery, format: OutputFormat, options: ReadOptions): QueryResult {
  // Batches an engine encoded itself are Arrow (postgres/copy-arrow.ts): the answer is the query's
  // schema message, their messages and the end marker, in one buffer.
  if (format.name === "arrow" && batches.every((batch) => batch.arrow !== undefined)) {
    // The only batch, written between them by its engine (postgres/copy-binary.ts `frame`): as it is.
    if (batches.length === 1 && batches[0]!.whole === true) return { complete: [batches[0]!.arrow!], rows: batches[0]!.length ?? 0 };
    const { before, after } = arrowFrame(query);
    let rows = 0;
    for (const batch of batches) rows += batch.length ?? 0;
    return { complete: [concatBytes([before, ...batches.map((batch) => batch.arrow!), after])], rows };
  }
  const encoder = format.create(encoderColumns(query));
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  const chunks = [encoder.head()];
  let rows = 0;
  const tally = { valueBytes: 0 };
  try {
    for (const batch of batches) {
      rows += batch.length ?? batch.rows.length;
      chunks.push(encodeBatch(encoder, batch, tally, maxBytes));
    }
    chunks.push(encoder.end());
  } catch (error) {
    throw error instanceof ResultTooLarge ? error : readError(error, query);
  }
  return { complete: chunks, rows };
}

/**
 * The Arrow stream's schema message and end marker of a query's columns, made once per validated
 * query: a small answer read again and again (the same text, validated once: sql/validator.ts)
 * does not build and encode its schema every time. A validated query's columns never change; a
 * reload that changes a table validates its texts anew (new objects, new entries). Never sent as
 * they are: they are copied into each answer.
 */
const arrowFrames = new WeakMap<ValidatedQuery, ArrowFrame>();

export function arrowFrame(query: ValidatedQuery): ArrowFrame {
  let frame = arrowFrames.get(query);
  if (frame === undefined) {
    frame = { before: schemaMessage(arrowSchema(encoderColumns(query))), after: endOfStream() };
    arrowFrames.set(query, frame);
  }
  return frame;
}

/** A value that does not fit names its table, column and row of the result (these engines have no rowid). */
function readError(error: unknown, query: ValidatedQuery): Error {
  if (error instanceof ValueDoesNotFit) {
    const column = query.columns[error.columnIndex]?.name ?? `#${error.columnIndex}`;
    return new ValueDoesNotFitError(query.table.name, column, null, `row ${error.rowIndex + 1} of the result: ${error.detail}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

