/**
 * One Arrow column of one record batch, built straight into typed arrays from row arrays
 * (DESIGN.md §5). Each kind has its own loop so the engine sees one shape of value per loop;
 * the common values take an inline fast path, everything else goes through `convertValue`,
 * the single authority on what fits (fit.ts), so the fast paths cannot disagree with it.
 */
import { convertValue, fitProblem, INT64_MAX, INT64_MIN, Misfit, type ArrowValue } from "./fit.ts";
import { parseIsoDate, parseIsoTimestamp } from "./datetime.ts";
import type { ArrowKind } from "./types.ts";

/** The Arrow buffers of one column, in IPC order: validity first (empty when there is no null). */
export interface ColumnChunk {
  nullCount: number;
  buffers: Uint8Array[];
}

export interface ColumnContext {
  kind: ArrowKind;
  nullable: boolean;
  safeIntegers: boolean;
  /** Index of the batch's first row in the whole result, for error positions. */
  firstRowIndex: number;
}

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

const EMPTY = new Uint8Array(0);
const utf8 = new TextEncoder();

type ColumnBuilder = (rows: unknown[][], column: number, context: ColumnContext) => ColumnChunk;

export const buildColumn: Record<ArrowKind, ColumnBuilder> = {
  int64: (rows, column, context) => int64Like(rows, column, context, null),
  timestamp: (rows, column, context) => int64Like(rows, column, context, parseIsoTimestamp),
  float64: float64Column,
  date32: date32Column,
  bool: boolColumn,
  utf8: (rows, column, context) => variableWidth(rows, column, context, true),
  binary: (rows, column, context) => variableWidth(rows, column, context, false),
};

/** Tracks nulls; the bitmap is only allocated once a null shows up. */
class Validity {
  private bits: Uint8Array | null = null;
  nullCount = 0;
  constructor(private readonly length: number) {}

  setNull(row: number): void {
    this.bits ??= new Uint8Array((this.length + 7) >> 3).fill(0xff);
    this.bits[row >> 3]! &= ~(1 << (row & 7));
    this.nullCount++;
  }

  chunk(...buffers: Uint8Array[]): ColumnChunk {
    return { nullCount: this.nullCount, buffers: [this.bits ?? EMPTY, ...buffers] };
  }
}

/** The slow path: NULL, or any value the fast path did not take. Throws when it does not fit. */
function slowValue(value: unknown, row: number, column: number, context: ColumnContext, validity: Validity): ArrowValue | null {
  if (value === null && context.nullable) {
    validity.setNull(row);
    return null;
  }
  const converted = value === null ? new Misfit(fitProblem(context.kind, null, { nullable: false }) ?? "NULL") : convertValue(context.kind, value, context.safeIntegers);
  if (converted instanceof Misfit) throw new ValueDoesNotFit(column, context.firstRowIndex + row, converted.detail);
  return converted;
}

/**
 * Int64 and Timestamp(ms) share a layout. Bigints go through a DataView (in Bun several times faster
 * than a BigInt64Array store); a safe-integer number is written as two 32-bit words, no BigInt made.
 */
function int64Like(rows: unknown[][], column: number, context: ColumnContext, parseText: ((text: string) => number) | null): ColumnChunk {
  const n = rows.length;
  const bytes = new Uint8Array(n * 8);
  const view = new DataView(bytes.buffer);
  const words = new Int32Array(bytes.buffer);
  const validity = new Validity(n);
  const isTimestamp = parseText !== null;
  for (let r = 0; r < n; r++) {
    const value = rows[r]![column];
    let int: number | bigint | null;
    if (isTimestamp) {
      int = typeof value === "string" ? parseText(value) : NaN;
      if (int !== int) int = slowValue(value, r, column, context, validity) as number | bigint | null;
    } else if (typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX) {
      view.setBigInt64(r * 8, value, true);
      continue;
    } else if (typeof value === "number" && Number.isSafeInteger(value)) {
      int = value;
    } else {
      int = slowValue(value, r, column, context, validity) as number | bigint | null;
    }
    if (int === null) continue;
    if (typeof int === "bigint") {
      view.setBigInt64(r * 8, int, true);
    } else {
      words[2 * r] = int | 0; // little-endian: low word first (ToInt32 is the value modulo 2^32)
      words[2 * r + 1] = Math.floor(int / 4_294_967_296);
    }
  }
  return validity.chunk(bytes);
}

function float64Column(rows: unknown[][], column: number, context: ColumnContext): ColumnChunk {
  const n = rows.length;
  const data = new Float64Array(n);
  const validity = new Validity(n);
  for (let r = 0; r < n; r++) {
    const value = rows[r]![column];
    if (typeof value === "number") data[r] = value;
    else {
      const float = slowValue(value, r, column, context, validity);
      if (float !== null) data[r] = float as number;
    }
  }
  return validity.chunk(new Uint8Array(data.buffer));
}

function date32Column(rows: unknown[][], column: number, context: ColumnContext): ColumnChunk {
  const n = rows.length;
  const data = new Int32Array(n);
  const validity = new Validity(n);
  for (let r = 0; r < n; r++) {
    const value = rows[r]![column];
    let days = typeof value === "string" ? parseIsoDate(value) : NaN;
    if (days !== days) days = slowValue(value, r, column, context, validity) as number;
    if (days !== null) data[r] = days;
  }
  return validity.chunk(new Uint8Array(data.buffer));
}

function boolColumn(rows: unknown[][], column: number, context: ColumnContext): ColumnChunk {
  const n = rows.length;
  const bits = new Uint8Array((n + 7) >> 3);
  const validity = new Validity(n);
  for (let r = 0; r < n; r++) {
    const value = rows[r]![column];
    const truth = value === 1n || value === 1 || value === true || (value !== 0n && value !== 0 && value !== false && slowValue(value, r, column, context, validity) === true);
    if (truth) bits[r >> 3]! |= 1 << (r & 7);
  }
  return validity.chunk(bits);
}

/**
 * Utf8 and Binary: int32 offsets and the bytes. Text is joined and encoded with one call while it
 * is ASCII (the common case: one native call instead of one per value); a batch with other
 * characters is encoded value by value into a buffer sized for the worst case.
 */
function variableWidth(rows: unknown[][], column: number, context: ColumnContext, isText: boolean): ColumnChunk {
  const n = rows.length;
  const offsets = new Int32Array(n + 1);
  const validity = new Validity(n);
  const values: (string | Uint8Array)[] = new Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    let value = rows[r]![column];
    if (isText ? typeof value !== "string" : !(value instanceof Uint8Array)) {
      value = slowValue(value, r, column, context, validity) ?? (isText ? "" : EMPTY);
    }
    const item = value as string | Uint8Array;
    values[r] = item;
    total += isText ? (item as string).length : (item as Uint8Array).byteLength;
    offsets[r + 1] = total;
  }
  if (!isText) {
    const bytes = new Uint8Array(total);
    for (let r = 0; r < n; r++) bytes.set(values[r] as Uint8Array, offsets[r]!);
    return validity.chunk(new Uint8Array(offsets.buffer), bytes);
  }
  const joined = (values as string[]).join("");
  const ascii = new Uint8Array(total);
  const { read, written } = utf8.encodeInto(joined, ascii);
  // Every character took one byte only if all of them were read into exactly `total` bytes.
  if (read === total && written === total) {
    return validity.chunk(new Uint8Array(offsets.buffer), ascii);
  }
  const bytes = new Uint8Array(total * 3);
  let position = 0;
  for (let r = 0; r < n; r++) {
    position += utf8.encodeInto(values[r] as string, bytes.subarray(position)).written;
    offsets[r + 1] = position;
  }
  return validity.chunk(new Uint8Array(offsets.buffer), bytes.subarray(0, position));
}
