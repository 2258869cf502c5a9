/**
 * Rows from bun:sqlite → an Arrow IPC stream (ARCHITECTURE.md §5): a schema message, one record-batch
 * message per batch, the end-of-stream marker. Each message is its own buffer so a worker can
 * transfer it to the HTTP thread as soon as it is ready; concatenated they are one valid stream.
 *
 * Rows are arrays of values as `stmt.values()` returns them, or objects keyed by output column name
 * as `stmt.iterate()` returns them (what the query worker uses). They are expected from a connection
 * opened with `safeIntegers: true` (INTEGER → bigint, REAL → number), which keeps integers beyond
 * 2^53 exact and tells an INTEGER from a REAL; see fit.ts for `safeIntegers: false`.
 */
import { Field, Schema } from "apache-arrow";
import { AmbiguousNumber, ValueDoesNotFit, type Cells, type ColumnContext, type ColumnPlanner, type Row } from "./columns.ts";
import { fitProblem } from "./fit.ts";
import {
  planBool,
  planDate32,
  planDecimal128,
  planFloat32,
  planFloat64,
  planInt16,
  planInt32,
  planInt64,
  planTimestamp,
  planTimestampMicros,
} from "./fixed-width.ts";
import { planBinary, planUtf8 } from "./variable-width.ts";
import { listPlanner } from "./list.ts";
import { structPlanner } from "./struct.ts";
import { endOfStream, recordBatchMessage, schemaMessage } from "./ipc.ts";
import { arrowTypeFor, type ArrowKind, type ColumnType } from "./types.ts";

export { AmbiguousNumber, ValueDoesNotFit, type Row } from "./columns.ts";
export { fitProblem, type FitOptions } from "./fit.ts";

/** A result column: its name, its type (a ColumnType: kind, and precision/scale/child/fields where the kind needs them), nullability. */
export interface EncoderColumn extends ColumnType {
  name: string;
  nullable: boolean;
  metadata?: Record<string, string>;
}

export interface EncoderOptions {
  /** The rows come from a connection with `safeIntegers: true` (default true). */
  safeIntegers?: boolean;
  /** Property of each column in object rows, in column order (default: the columns' names). */
  rowKeys?: readonly string[];
  /**
   * The rows were read with `safeIntegers: false` because that is faster, and can be read again
   * with it: a number whose exact value or storage class (INTEGER or REAL) could matter (one the
   * fast paths do not take: beyond 2^53 in an Int64 column, or in a column other than Int64 and
   * Float64) throws
   * AmbiguousNumber instead of being converted, and so does any value that does not fit; the
   * caller then reads the rows again with `safeIntegers: true` and encodes them exactly.
   */
  rereadAmbiguousNumbers?: boolean;
}

export interface StreamEncoder {
  /** IPC schema message (with continuation marker). */
  schemaMessage(): Uint8Array;
  /**
   * One record batch; throws ValueDoesNotFit. `firstRowIndex` positions errors in the result.
   * All rows of a batch are arrays, or all are objects keyed by the columns' names.
   */
  batchMessage(rows: readonly Row[], firstRowIndex: number): Uint8Array;
  /** End-of-stream marker. */
  endMessage(): Uint8Array;
  /**
   * A whole stream of one batch (schema, batch, end) in one buffer: a small result goes out as a
   * single write. Throws ValueDoesNotFit like `batchMessage`.
   */
  wholeStream(rows: readonly Row[]): Uint8Array;
}

export const DEFAULT_BATCH_SIZE = 65_536;

const planColumn: Record<ArrowKind, ColumnPlanner> = {
  int64: planInt64,
  timestamp: planTimestamp,
  float64: planFloat64,
  date32: planDate32,
  bool: planBool,
  utf8: planUtf8,
  binary: planBinary,
  int16: planInt16,
  int32: planInt32,
  float32: planFloat32,
  decimal128: planDecimal128,
  timestamp_us: planTimestampMicros,
  timestamp_us_utc: planTimestampMicros,
  list: listPlanner((kind) => planColumn[kind]),
  struct: structPlanner((kind) => planColumn[kind]),
};

/** The schema; throws a TypeError for a column type that lacks what its kind needs (types.ts). */
export function arrowSchema(columns: EncoderColumn[]): Schema {
  return new Schema(
    columns.map((c) => new Field(c.name, arrowTypeFor(c), c.nullable, new Map(Object.entries(c.metadata ?? {})))),
  );
}

export function createStreamEncoder(columns: EncoderColumn[], options: EncoderOptions = {}): StreamEncoder {
  const schema = arrowSchema(columns);
  const rereadAmbiguousNumbers = options.rereadAmbiguousNumbers ?? false;
  const safeIntegers = !rereadAmbiguousNumbers && (options.safeIntegers ?? true);
  const rowKeys = options.rowKeys ?? columns.map((column) => column.name);
  const positionKeys = columns.map((_, i) => i);
  let frame: { before: Uint8Array; after: Uint8Array } | undefined;

  function encodeBatch(rows: readonly Row[], firstRowIndex: number, around?: typeof frame): Uint8Array {
    // Positions for array rows, property names for object rows.
    const keys = rows.length > 0 && !Array.isArray(rows[0]) ? rowKeys : positionKeys;
    const cells = rows as Cells;
    try {
      const plans = columns.map((column, i) => {
        const context: ColumnContext = { kind: column.kind, type: column, key: keys[i]!, nullable: column.nullable, safeIntegers, rereadAmbiguousNumbers, firstRowIndex };
        return planColumn[column.kind](cells, i, context);
      });
      return recordBatchMessage(rows.length, plans, around);
    } catch (error) {
      if (error instanceof ValueDoesNotFit && rereadAmbiguousNumbers) throw new AmbiguousNumber();
      if (error instanceof ValueDoesNotFit) throw firstMisfit(columns, cells, keys, firstRowIndex, error, safeIntegers);
      throw error;
    }
  }

  return {
    schemaMessage: () => schemaMessage(schema),
    batchMessage: (rows, firstRowIndex) => encodeBatch(rows, firstRowIndex),
    endMessage: endOfStream,
    wholeStream(rows) {
      frame ??= { before: schemaMessage(schema), after: endOfStream() };
      return encodeBatch(rows, 0, frame);
    },
  };
}

/**
 * Text and blob columns are checked while sizing the batch, before the others are written, so the
 * misfit found first may not be the first one; name the first in column order, then row order.
 * Exported so that every output format (src/formats/) names the same misfit as this encoder.
 */
export function firstMisfit(
  columns: EncoderColumn[],
  rows: Cells,
  keys: readonly (number | string)[],
  firstRowIndex: number,
  found: ValueDoesNotFit,
  safeIntegers: boolean,
): ValueDoesNotFit {
  for (let c = 0; c < found.columnIndex; c++) {
    const options = { nullable: columns[c]!.nullable, safeIntegers };
    for (let r = 0; r < rows.length; r++) {
      const detail = fitProblem(columns[c]!, rows[r]![keys[c]!], options);
      if (detail !== null) return new ValueDoesNotFit(c, firstRowIndex + r, detail);
    }
  }
  return found;
}

/** The whole stream in one buffer (snapshots, tests). An empty `rows` gives schema + end only. */
export function encodeRowsToIpc(
  columns: EncoderColumn[],
  rows: readonly Row[],
  batchSize = DEFAULT_BATCH_SIZE,
  options: EncoderOptions = {},
): Uint8Array {
  if (!(Number.isInteger(batchSize) && batchSize > 0)) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const encoder = createStreamEncoder(columns, options);
  const messages = [encoder.schemaMessage()];
  for (let first = 0; first < rows.length; first += batchSize) {
    messages.push(encoder.batchMessage(rows.slice(first, first + batchSize), first));
  }
  messages.push(encoder.endMessage());
  const out = new Uint8Array(messages.reduce((sum, m) => sum + m.byteLength, 0));
  let position = 0;
  for (const message of messages) {
    out.set(message, position);
    position += message.byteLength;
  }
  return out;
}

// Typed-array views write integers little-endian; Arrow IPC bodies are little-endian here.
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error("arrow402 needs a little-endian platform");
