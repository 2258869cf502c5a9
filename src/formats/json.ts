/**
 * JSON (an array of row objects) and NDJSON (one row object per line), ARCHITECTURE.md §13. Keys are the
 * output column names, in column order; NULL is `null`.
 *
 * int64 values are JSON numbers while they are safe integers (|v| <= 2^53 - 1) and JSON strings of
 * their exact digits beyond (`"9223372036854775807"`), DESIGN §16: a client is expected to read
 * this JSON with an ordinary parser, and JavaScript's `JSON.parse` (the MCP SDK, browsers) turns
 * 9007199254740993 into 9007199254740992 without a word. A string is never rounded by any reader;
 * a number that fits reads back exactly everywhere, so it stays a number. There is no opt-in for
 * raw digits: only the format's name travels to the worker and keys kept answers, and Arrow,
 * Parquet and CSV already carry int64 exactly, typed or as bare digits.
 *
 * float64: the shortest text that reads back to the same double. JSON has no literal for infinity:
 * ±Infinity are written `1e999` / `-1e999`, numbers every common reader (JavaScript, Python,
 * Jackson, DuckDB) reads as ±infinity; NaN, which SQLite stores as NULL, is `null`.
 * Strings: text as JSON strings; blobs base64; dates `YYYY-MM-DD`; timestamps ISO-8601 UTC with
 * milliseconds, or microseconds for the other engines' (text-values.ts). Other engines' kinds:
 * int16/int32 numbers, float32 its shortest text as a number, a decimal128 always a string of its
 * exact digits at the column's scale (`"12.3400"`, DESIGN §16), a list a JSON array of its
 * elements written as their own kind is.
 */
import type { EncoderColumn } from "../arrow/encode.ts";
import type { ArrowKind } from "../arrow/types.ts";
import { utf8Bytes, type FormatEncoder, type FormatOptions } from "./encoder.ts";
import { lineRenderer, type TextLayout } from "./text-rows.ts";
import { jsonFloat, safeIntegerText, type TextForm } from "./text-values.ts";

export { jsonFloat, safeIntegerText } from "./text-values.ts";

/** What JSON.stringify escapes: quote, backslash, control characters, lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** How a kind's plain text form becomes JSON. */
export const jsonCell: Record<ArrowKind, (form: TextForm) => TextForm> = {
  int64: (form) => (value) => {
    const text = form(value);
    return typeof text === "string" && !safeIntegerText(text) ? `"${text}"` : text;
  },
  bool: (form) => form,
  float64: (form) => (value) => {
    const text = form(value);
    return typeof text === "string" ? jsonFloat(text) : text;
  },
  utf8: (form) => (value) => {
    const text = form(value);
    if (typeof text !== "string") return text;
    return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
  },
  // base64 and ISO-8601 text never need escaping.
  binary: quoted,
  date32: quoted,
  timestamp: quoted,
  int16: (form) => form,
  int32: (form) => form,
  float32: (form) => (value) => {
    const text = form(value);
    return typeof text === "string" ? jsonFloat(text) : text;
  },
  // A decimal is always a string of its exact digits (DESIGN §16): a JSON number is read as a double.
  decimal128: quoted,
  timestamp_us: quoted,
  timestamp_us_utc: quoted,
  // Already the JSON array of its elements (text-values.ts).
  list: (form) => form,
};

function quoted(form: TextForm): TextForm {
  return (value) => {
    const text = form(value);
    return typeof text === "string" ? `"${text}"` : text;
  };
}


const layout: TextLayout = {
  cell: (kind, form) => jsonCell[kind](form),
  before: (column, index) => (index === 0 ? "{" : ",") + JSON.stringify(column.name) + ":",
  after: "}",
  nullText: "null",
};

/** NDJSON: every row object followed by LF; no head, no end. An empty result is an empty body. */
export function createNdjsonEncoder(columns: EncoderColumn[], options: FormatOptions = {}): FormatEncoder {
  const render = lineRenderer(columns, options, layoutFor(columns));
  return {
    head: () => new Uint8Array(0),
    batch: (rows, firstRowIndex) => (rows.length === 0 ? new Uint8Array(0) : utf8Bytes(render(rows, firstRowIndex).join("\n") + "\n")),
    end: () => new Uint8Array(0),
  };
}

/**
 * JSON: `[`, the row objects one per line separated by commas, `]` and LF. An empty result is
 * `[]`. Stateful: the first row of the result has no comma before it.
 */
export function createJsonEncoder(columns: EncoderColumn[], options: FormatOptions = {}): FormatEncoder {
  const render = lineRenderer(columns, options, layoutFor(columns));
  let started = false;
  return {
    head: () => utf8Bytes("["),
    batch(rows, firstRowIndex) {
      if (rows.length === 0) return new Uint8Array(0);
      const text = (started ? ",\n" : "\n") + render(rows, firstRowIndex).join(",\n");
      started = true;
      return utf8Bytes(text);
    },
    end: () => utf8Bytes(started ? "\n]\n" : "]\n"),
  };
}

/** A result without columns cannot occur (the dialect requires one); `{}` keeps each line an object. */
function layoutFor(columns: EncoderColumn[]): TextLayout {
  return columns.length > 0 ? layout : { ...layout, after: "{}" };
}
