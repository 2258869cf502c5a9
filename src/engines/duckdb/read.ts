/**
 * One read of a DuckDB source (DESIGN.md §14 "Reads only, bounded"): its own connection, one
 * transaction (the count, when asked for, and the rows come from one snapshot; a small result is
 * read whole first and is its own count), the rows streamed
 * chunk by chunk (DuckDB's streaming result computes the next chunk only when it is fetched: a
 * reader that stalls holds the query back, memory does not grow with the result). close() — a
 * deadline, a client gone — interrupts the query in DuckDB and ends the read at once; DuckDB sees
 * the interrupt between two pieces of its work (a row group of a scan, measured up to seconds on
 * heavy expressions), so the connection is closed in the background once the statement has stopped.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBInstance, DuckDBResult } from "@duckdb/node-api";
import type { EncoderColumn, ValueDoesNotFit } from "../../arrow/encode.ts";
import { BadRequestError } from "../../errors.ts";
import { timeLimitError } from "../../results/time-budget.ts";
import type { PulledBatch, PulledBatches } from "../pulled-read.ts";
import { bytesRead } from "../paced-collection.ts";
import { ArrowChunks } from "./arrow-chunks.ts";
import { firstLine } from "./database.ts";
import { loadDuckDBBindings } from "./native-library.ts";
import type { DuckColumnType } from "./types.ts";
import { chunkRows } from "./values.ts";

/**
 * A filter's chunks hold the rows of one vector of the scan that passed it: a few rows each (a
 * range matching 1 row in 2,000: 2,927 chunks of 1.5 rows over 10M rows). Each batch is a record
 * batch and a write of the response, so chunks are gathered into batches of at least BATCH_ROWS
 * rows (DuckDB's own chunk size: a full chunk goes as it is), or of what BATCH_WAIT_MS brought.
 * The first chunk goes at once (the first rows are not held back); rows gathered later wait at
 * most for the next chunk, which DuckDB hands over when its scan has found more rows or ended.
 */
const BATCH_ROWS = 2048;
const BATCH_WAIT_MS = 100;
/**
 * A DuckDB vector's bytes per value as paced-collection.ts counts them, alike for every type: 8 for
 * a number or a date, a string's 16-byte header and its text beyond 12 bytes; 16 on average is
 * close enough to pace by.
 */
const VECTOR_BYTES_PER_VALUE = 16;

/** A result this small, read whole before its first row is sent, needs no count of its own (below). */
const COUNTED_ROWS = 16_384;

export interface DuckReadOptions {
  select: string;
  /** The select list's column types, in order. */
  types: readonly DuckColumnType[];
  /** The count's SQL (a streamed result's, against max_rows), or null. A result of at most COUNTED_ROWS rows is counted as it is read, first; a larger one by this SQL, in the same transaction, before its rows are read again. */
  count: string | null;
  /** The time limit of the statements before the first row (the count, the start of the select); the rows' own limit is the caller's. Infinity: none. */
  timeoutMs: number;
  /**
   * The Arrow encoder's columns, when the answer is Arrow and its values need not be counted: then
   * chunks whose columns arrow-chunks.ts takes come as record-batch messages, with no values.
   */
  arrow?: readonly EncoderColumn[];
  /** The error for a read that ran out of the source's memory (memory_limit); by default DuckDB's own, as a 500. */
  outOfMemory?: () => Error;
  /** A scan's: hears of each refused value (then null) instead of failing the read. */
  misfit?: (refused: ValueDoesNotFit) => void;
}

export interface DuckRead extends PulledBatches {
  readonly count: number | null;
  readonly batches: AsyncGenerator<PulledBatch, void, undefined>;
}

/** DuckDB's words when a query finds no room within the source's memory_limit. */
const OUT_OF_MEMORY = /^Out of Memory Error\b/;

/**
 * An error of the driver's, as our own: its first line (DuckDB adds hints and context lines), naming
 * the engine; or, when DuckDB ran out of the source's memory, `outOfMemory`'s (the query's doing,
 * as the time limit is).
 */
export function duckError(error: unknown, outOfMemory?: () => Error): Error {
  const line = firstLine(error);
  if (outOfMemory !== undefined && OUT_OF_MEMORY.test(line)) return outOfMemory();
  return new Error(`DuckDB: ${line}`);
}

export async function openDuckRead(instance: DuckDBInstance, options: DuckReadOptions): Promise<DuckRead> {
  // Loaded before the connection opens: a binding that fails to load leaves nothing to release.
  const arrow = options.arrow === undefined || options.misfit !== undefined ? undefined : { encoder: options.arrow, bindings: await loadDuckDBBindings() };
  const connection = await instance.connect();
  let stopped: unknown = null;
  let closed = false;
  /** The statement or fetch under way: closing waits for it before the connection goes. */
  let pending: Promise<unknown> = Promise.resolve();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending = promise.catch(() => {});
    return promise;
  };
  /** The connection is gone: nothing may be called on it. */
  let disconnected = false;
  const release = async () => {
    if (closed) return;
    closed = true;
    await pending;
    disconnected = true;
    connection.closeSync();
  };
  /**
   * The calls waiting on DuckDB, each rejected when the read stops. One entry per call, removed as it
   * settles: racing every fetch against one long-lived "stopped" promise would leave a reaction on
   * it per fetch, each holding its chunk until the read ends (memory growing with the result).
   */
  const waiting = new Set<(reason: unknown) => void>();
  const stop = (reason: unknown) => {
    if (stopped !== null) return;
    stopped = reason;
    // A connection already closed has nothing running (and must not be touched).
    if (!disconnected) connection.interrupt();
    for (const reject of waiting) reject(reason);
    waiting.clear();
  };
  /** A DuckDB call, given up on (not waited for) when the read stops. */
  const call = <T>(promise: Promise<T>): Promise<T> => {
    const tracked = track(promise);
    if (stopped !== null) return Promise.reject(stopped);
    return new Promise<T>((resolve, reject) => {
      waiting.add(reject);
      tracked.then(resolve, reject).finally(() => waiting.delete(reject));
    });
  };
  const failure = (error: unknown) => (stopped !== null ? stopped : duckError(error, options.outOfMemory));

  let count: number | null = null;
  let result: DuckDBResult;
  /** The chunks read before the count was known (a result within COUNTED_ROWS), handed over first. */
  const early: DuckDBDataChunk[] = [];
  /** The result was read to its end with them. */
  let drained = false;
  const timer = Number.isFinite(options.timeoutMs) ? setTimeout(() => stop(timeLimitError(options.timeoutMs)), options.timeoutMs) : undefined;
  try {
    await call(connection.run("BEGIN TRANSACTION READ ONLY"));
    result = await call(connection.stream(options.select));
    if (options.count !== null) {
      // A result of at most COUNTED_ROWS rows is its own count: the count's second pass over the
      // table (a LIKE over a 10M-row Parquet column: a second read of its 400 MB) is for larger ones.
      let rows = 0;
      for (;;) {
        const chunk = await call(result.fetchChunk());
        if (chunk === null || chunk.rowCount === 0) {
          count = rows;
          drained = true;
          break;
        }
        early.push(chunk);
        rows += chunk.rowCount;
        if (rows > COUNTED_ROWS) {
          early.length = 0;
          count = Number((await call(connection.runAndReadAll(options.count))).getRowsJS()[0]![0]);
          result = await call(connection.stream(options.select));
          break;
        }
      }
    }
  } catch (error) {
    const reported = failure(error);
    void release();
    throw reported;
  } finally {
    clearTimeout(timer);
  }

  /** The chunks' Arrow columns (arrow-chunks.ts), once the first chunk showed they can be; null: values of each row. */
  let direct: ArrowChunks | null | undefined = arrow === undefined ? null : undefined;

  async function* batches(): AsyncGenerator<PulledBatch, void, undefined> {
    let firstRowIndex = 0;
    /** Rows of chunks not yet handed over (as values, or in `direct`'s columns), gathered since `gatheredSince`. */
    let gathered: unknown[][] = [];
    let gatheredRows = 0;
    let gatheredSince = 0;
    const take = (): PulledBatch => {
      const batch: PulledBatch = direct === null ? { rows: gathered, firstRowIndex } : { rows: [], arrow: direct!.batch(gatheredRows, firstRowIndex), length: gatheredRows, firstRowIndex };
      firstRowIndex += gatheredRows;
      gathered = [];
      gatheredRows = 0;
      return batch;
    };
    try {
      for (;;) {
        if (stopped !== null) throw stopped;
        let chunk;
        try {
          chunk = early.length > 0 ? early.shift()! : drained ? null : await call(result.fetchChunk());
        } catch (error) {
          throw failure(error);
        }
        if (stopped !== null) throw stopped;
        const ended = chunk === null || chunk.rowCount === 0;
        if (!ended) {
          const count = chunk!.rowCount;
          if (direct === undefined) direct = ArrowChunks.forChunk(arrow!.bindings, chunk!.chunk, options.types, arrow!.encoder);
          const first = gatheredRows === 0;
          if (direct === null) {
            const converted = chunkRows(chunk!, options.types, firstRowIndex + gatheredRows, options.misfit);
            // A chunk that starts a batch is the batch's rows as they are (a full chunk goes alone).
            if (gatheredRows === 0) gathered = converted;
            else for (const row of converted) gathered.push(row);
          } else direct.append(chunk!.chunk, count, firstRowIndex + gatheredRows);
          gatheredRows += count;
          // The values are JavaScript's (or the batch's) now: reset() lets the chunk's string heap and
          // the blocks it pins go at once; its vectors wait for its finalizer, which collections paced
          // by the chunks read bring (paced-collection.ts, BENCHMARKS.md item 8, memory).
          chunk!.reset();
          bytesRead(count * Math.max(options.types.length, 1) * VECTOR_BYTES_PER_VALUE);
          if (first && (count >= BATCH_ROWS || firstRowIndex === 0)) {
            yield take();
            continue;
          }
          if (first) gatheredSince = performance.now();
        }
        if (gatheredRows > 0 && (ended || gatheredRows >= BATCH_ROWS || performance.now() - gatheredSince >= BATCH_WAIT_MS)) yield take();
        if (ended) break;
      }
      await track(connection.run("COMMIT")).catch(() => {});
    } finally {
      // Ended, failed, or left early (the generator's return()): the connection goes with its
      // transaction, once a statement still stopping has stopped.
      void release();
    }
  }

  return {
    count,
    batches: batches(),
    async close(reason?: unknown) {
      stop(reason ?? new Error("the read was closed"));
      void release();
    },
  };
}

/** One statement's single value on a connection of its own, interrupted at `timeoutMs` (the answer does not wait for DuckDB to stop). */
export async function queryValue(instance: DuckDBInstance, sql: string, timeoutMs: number, outOfMemory?: () => Error): Promise<unknown> {
  const connection: DuckDBConnection = await instance.connect();
  const running = connection.runAndReadAll(sql);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connection.interrupt();
      reject(timeLimitError(timeoutMs));
    }, timeoutMs);
  });
  try {
    const reader = await Promise.race([running, deadline]);
    return reader.getRowsJS()[0]?.[0] ?? null;
  } catch (error) {
    throw error instanceof BadRequestError ? error : duckError(error, outOfMemory);
  } finally {
    clearTimeout(timer);
    void running.then(
      () => connection.closeSync(),
      () => connection.closeSync(),
    );
  }
}
