/**
 * Fixed-width columns: Int64, Timestamp(ms), Float64, Date32, Bool. Their sizes follow from the
 * row count, so the plan is immediate and the values are written in place.
 */
import { slowValue, Validity, validityLength, type BatchBuffer, type Cells, type ColumnContext, type ColumnPlan } from "./columns.ts";
import { dateDays, parseIsoDate, timestampFromDays } from "./datetime.ts";
import { INT64_MAX, INT64_MIN } from "./fit.ts";

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
