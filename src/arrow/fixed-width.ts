/**
 * Fixed-width columns: Int64, Timestamp(ms), Float64, Date32, Bool (SQLite's), and Int16, Int32,
 * Float32, Decimal128, Timestamp(µs) (the other engines'). Their sizes follow from the row count, so
 * the plan is immediate and the values are written in place, little-endian.
 */
import { slowValue, Validity, validityLength, type BatchBuffer, type Cells, type ColumnContext, type ColumnPlan } from "./columns.ts";
import { dateDays, parseIsoDate, timestampFromDays } from "./datetime.ts";
import { DECIMAL_LIMITS, INT64_MAX, INT64_MIN } from "./fit.ts";

/** Writes a column's values into the data buffer at byte `at` of `out` (8-aligned). */
type RowLoop = (rows: Cells, column: number, context: ColumnContext, out: BatchBuffer, at: number, validity: Validity) => void;

function fixedWidth(bytesFor: (rows: number) => number, loop: RowLoop) {
  return (rows: Cells, column: number, context: ColumnContext): ColumnPlan => ({
    lengths: [validityLength(rows.length, context.nullable), bytesFor(rows.length)],
    write(out, positions, first) {
      const validity = new Validity(out.bytes, positions[first]!, validityLength(rows.length, context.nullable));
      loop(rows, column, context, out, positions[first + 1]!, validity);
      return validity.nullCount;
    },
  });
}

/** Bigints go through a DataView (in Bun several times faster than a BigInt64Array store). */
export const planInt64 = fixedWidth(
  (n) => n * 8,
  (rows, column, context, { view, words }, at, validity) => {
    const key = context.key;
    const word = at >> 2;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      if (typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX) {
        view.setBigInt64(at + r * 8, value, true);
      } else if (typeof value === "number" && Number.isSafeInteger(value)) {
        writeSafeInteger(words, word, r, value);
      } else {
        const int = slowValue(value, r, column, context, validity) as number | bigint | null;
        if (typeof int === "bigint") view.setBigInt64(at + r * 8, int, true);
        else if (int !== null) writeSafeInteger(words, word, r, int);
      }
    }
  },
);

export const planTimestamp = fixedWidth(
  (n) => n * 8,
  (rows, column, context, { view, words }, at, validity) => {
    const key = context.key;
    const word = at >> 2;
    // Rows are often ordered by time: consecutive timestamps share their date, and comparing the
    // 10-character prefix with the previous one is cheaper than parsing it again.
    let lastDate = "";
    let lastDays = NaN;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      let ms = NaN;
      if (typeof value === "string") {
        const date = value.substring(0, 10);
        if (date !== lastDate) {
          lastDate = date;
          lastDays = dateDays(date);
        }
        ms = timestampFromDays(value, lastDays);
      }
      if (ms === ms) {
        writeSafeInteger(words, word, r, ms);
      } else {
        const int = slowValue(value, r, column, context, validity) as number | bigint | null;
        if (typeof int === "bigint") view.setBigInt64(at + r * 8, int, true);
        else if (int !== null) writeSafeInteger(words, word, r, int);
      }
    }
  },
);

/** Little-endian int64 from a safe integer: low word first (ToInt32 is the value modulo 2^32). */
function writeSafeInteger(words: Int32Array, first: number, row: number, value: number): void {
  words[first + 2 * row] = value | 0;
  words[first + 2 * row + 1] = Math.floor(value / 4_294_967_296);
}

export const planFloat64 = fixedWidth(
  (n) => n * 8,
  (rows, column, context, { floats }, at, validity) => {
    const key = context.key;
    const first = at >> 3;
    // A number is exact here however it was read: Float64 columns have REAL affinity (types.ts),
    // under which SQLite stores every number, even an INTEGER given to it, as a REAL.
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      if (typeof value === "number") {
        floats[first + r] = value;
      } else {
        const float = slowValue(value, r, column, context, validity);
        if (float !== null) floats[first + r] = float as number;
      }
    }
  },
);

export const planDate32 = fixedWidth(
  (n) => n * 4,
  (rows, column, context, { words }, at, validity) => {
    const key = context.key;
    const first = at >> 2;
    let lastText = "";
    let lastDays = NaN;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      let days = NaN;
      if (typeof value === "string") {
        // Dates repeat from row to row in most tables; reuse the last parse.
        if (value !== lastText) {
          lastText = value;
          lastDays = parseIsoDate(value);
        }
        days = lastDays;
      } else if (typeof value === "number" && context.safeIntegers && (value | 0) === value) {
        // Days since the epoch, as the other engines give a date (fit.ts `toDate`).
        days = value;
      }
      if (days !== days) days = slowValue(value, r, column, context, validity) as number;
      if (days !== null) words[first + r] = days;
    }
  },
);

export const planBool = fixedWidth(
  (n) => (n + 7) >> 3,
  (rows, column, context, { bytes }, at, validity) => {
    const key = context.key;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      const truth =
        value === 1n ||
        value === 1 ||
        value === true ||
        (value !== 0n && value !== 0 && value !== false && slowValue(value, r, column, context, validity) === true);
      if (truth) bytes[at + (r >> 3)]! |= 1 << (r & 7);
    }
  },
);

export const planInt16 = fixedWidth(
  (n) => n * 2,
  (rows, column, context, { view }, at, validity) => {
    const key = context.key;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      // Within the range exactly when the low 16 bits, sign-extended, are the number itself.
      if (typeof value === "number" && (value << 16) >> 16 === value) view.setInt16(at + r * 2, value, true);
      else {
        const int = slowValue(value, r, column, context, validity);
        if (int !== null) view.setInt16(at + r * 2, int as number, true);
      }
    }
  },
);

export const planInt32 = fixedWidth(
  (n) => n * 4,
  (rows, column, context, { words }, at, validity) => {
    const key = context.key;
    const first = at >> 2;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      if (typeof value === "number" && (value | 0) === value) words[first + r] = value;
      else {
        const int = slowValue(value, r, column, context, validity);
        if (int !== null) words[first + r] = int as number;
      }
    }
  },
);

export const planFloat32 = fixedWidth(
  (n) => n * 4,
  (rows, column, context, { view }, at, validity) => {
    const key = context.key;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      // A number that is a 32-bit float exactly (NaN aside, which the slow path takes).
      if (typeof value === "number" && Math.fround(value) === value) view.setFloat32(at + r * 4, value, true);
      else {
        const float = slowValue(value, r, column, context, validity);
        if (float !== null) view.setFloat32(at + r * 4, float as number, true);
      }
    }
  },
);

/** 16 bytes per value: the unscaled value in two's complement, low 64 bits first. */
export const planDecimal128 = fixedWidth(
  (n) => n * 16,
  (rows, column, context, { view }, at, validity) => {
    const key = context.key;
    const limit = DECIMAL_LIMITS[context.type.precision!]!;
    for (let r = 0; r < rows.length; r++) {
      let value = rows[r]![key];
      if (!(typeof value === "bigint" && value <= limit && value >= -limit)) value = slowValue(value, r, column, context, validity);
      if (value !== null) writeInt128(view, at + r * 16, value as bigint);
    }
  },
);

function writeInt128(view: DataView, at: number, value: bigint): void {
  // setBigInt64 keeps the low 64 bits; the high word is the value shifted, sign and all.
  view.setBigInt64(at, value, true);
  view.setBigInt64(at + 8, value >> 64n, true);
}

/** Timestamp(µs) with or without a zone: microseconds as a bigint. */
export const planTimestampMicros = fixedWidth(
  (n) => n * 8,
  (rows, column, context, { view }, at, validity) => {
    const key = context.key;
    for (let r = 0; r < rows.length; r++) {
      const value = rows[r]![key];
      if (typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX) view.setBigInt64(at + r * 8, value, true);
      else {
        const micros = slowValue(value, r, column, context, validity);
        if (micros !== null) view.setBigInt64(at + r * 8, micros as bigint, true);
      }
    }
  },
);
