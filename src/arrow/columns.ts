/**
 * What every column encoder shares: one Arrow column of one record batch is written straight from
 * row arrays into the message buffer (ARCHITECTURE.md §5). Encoding is two-phase so that each batch is one allocation and no copy: `plan`
 * reads what it must to know the byte length of each buffer (only Utf8/Binary need a pass for
 * that), then `write` fills the buffers at their final positions.
 *
 * Each kind has its own loop (fixed-width.ts, variable-width.ts) so the engine sees one shape of value per loop; the common values
 * take an inline fast path, everything else goes through `convertValue`, the single authority on
 * what fits (fit.ts), so the fast paths cannot disagree with it.
 */
import { convertValue, fitProblem, Misfit, type ArrowValue } from "./fit.ts";
import type { ArrowKind, ColumnType } from "./types.ts";

/**
 * A row as bun:sqlite returns it: an array (`values()`), read by position, or an object
 * (`iterate()`, `all()`), read by output column name. Objects are what the query worker gets:
 * bun:sqlite builds them faster than arrays.
 */
export type Row = readonly unknown[] | Readonly<Record<string, unknown>>;

/** Rows as the column loops see them: each value is read with the column's key. */
export type Cells = readonly Readonly<Record<PropertyKey, unknown>>[];

export interface ColumnContext {
  kind: ArrowKind;
  /** The column's full type (decimal128's precision and scale, list's element type, struct's members). */
  type: ColumnType;
  /** Where the column's value sits in a row: its position in an array, its name in an object. */
  key: number | string;
  nullable: boolean;
  safeIntegers: boolean;
  /** Rows read without safeIntegers, to be read again when a number is ambiguous (encode.ts). */
  rereadAmbiguousNumbers: boolean;
  /** Index of the batch's first row in the whole result, for error positions. */
  firstRowIndex: number;
}

/**
 * The one buffer of a record-batch message and the views every column writes through, made once
 * per batch (a column making its own views would cost more than ten rows of data). The buffer
 * starts 8-aligned and every column buffer sits at an 8-aligned position, so whole-buffer typed
 * arrays reach each of them: the int32 word of byte `at` is `words[at >> 2]`.
 */
export class BatchBuffer {
  readonly view: DataView;
  readonly words: Int32Array;
  readonly floats: Float64Array;

  readonly bytes: Uint8Array;

  /** `byteLength`: a multiple of 8. */
  constructor(byteLength: number) {
    // Views over an ArrayBuffer made first: asking a typed array for its `.buffer` is slow in JSC.
    const buffer = new ArrayBuffer(byteLength);
    this.bytes = new Uint8Array(buffer);
    this.view = new DataView(buffer);
    this.words = new Int32Array(buffer, 0, byteLength >> 2);
    this.floats = new Float64Array(buffer, 0, byteLength >> 3);
  }
}

/** A column's buffers, sized: the lengths are known, the bytes are written on demand. */
export interface ColumnPlan {
  /** Byte length of each buffer in IPC order; validity first (0 for a NOT NULL column). */
  lengths: number[];
  /**
   * Writes the column's buffers, the i-th at byte position `positions[first + i]` of `out`
   * (8-aligned, zeroed); returns the null count.
   */
  write(out: BatchBuffer, positions: readonly number[], first: number): number;
  /**
   * Nested fields: a List's values, a Struct's members, each with how many values it has and its
   * own plan. In the message their field nodes and buffers follow the column's own, in order (depth
   * first, as IPC orders nested fields).
   */
  children?: readonly { length: number; plan: ColumnPlan }[];
}

export type ColumnPlanner = (rows: Cells, column: number, context: ColumnContext) => ColumnPlan;

/** A value that cannot be represented in its column's Arrow type; positions are 0-based in the result. */
export class ValueDoesNotFit extends Error {
  constructor(
    readonly columnIndex: number,
    readonly rowIndex: number,
    readonly detail: string,
  ) {
    super(`value at row ${rowIndex}, column ${columnIndex} does not fit: ${detail}`);
    this.name = "ValueDoesNotFit";
  }
}

/** A value read without safeIntegers whose exact value or storage class matters: read the rows again with it. */
export class AmbiguousNumber extends Error {
  constructor() {
    super("a number read without safeIntegers needs an exact read");
    this.name = "AmbiguousNumber";
  }
}

/** Byte length of a validity bitmap: every nullable column has one, NOT NULL columns none. */
export function validityLength(rowCount: number, nullable: boolean): number {
  return nullable ? (rowCount + 7) >> 3 : 0;
}

/** A validity bitmap over `length` bytes of `bytes` from `at`: all valid until a null is recorded. */
export class Validity {
  nullCount = 0;
  constructor(
    readonly bytes: Uint8Array,
    private readonly at: number,
    readonly length: number,
  ) {
    if (length > 0) bytes.fill(0xff, at, at + length);
  }

  setNull(row: number): void {
    this.bytes[this.at + (row >> 3)]! &= ~(1 << (row & 7));
    this.nullCount++;
  }
}

/** The slow path: NULL, or any value the fast path did not take. Throws when it does not fit. */
export function slowValue(value: unknown, row: number, column: number, context: ColumnContext, validity: Validity): ArrowValue | null {
  if (value === null && context.nullable) {
    validity.setNull(row);
    return null;
  }
  if (context.rereadAmbiguousNumbers && typeof value === "number") throw new AmbiguousNumber();
  const converted =
    value === null
      ? new Misfit(fitProblem(context.kind, null, { nullable: false }) ?? "NULL")
      : convertValue(context.type, value, context.safeIntegers);
  if (converted instanceof Misfit) throw new ValueDoesNotFit(column, context.firstRowIndex + row, converted.detail);
  return converted;
}
