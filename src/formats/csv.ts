/**
 * CSV (RFC 4180; ARCHITECTURE.md §13): a header line of column names, then one line per row, every line
 * ending in CRLF as RFC 4180 asks. A field is quoted only when it holds a comma, a double quote, CR
 * or LF, with inner quotes doubled; a line break inside a text value is kept as stored.
 *
 * NULL is an empty field and the empty string a quoted empty field (`""`), so readers that tell
 * them apart (PostgreSQL's COPY, DuckDB) keep the difference. Numbers, dates, timestamps and blobs
 * are written as in every text format (text-values.ts): int64 as exact digits, decimals as exact
 * digits at their scale, blobs as base64, booleans as true/false, a list as the JSON array the JSON
 * format writes (quoted, as it holds commas).
 *
 * Values are never altered for spreadsheets: text starting with `=`, `+`, `-` or `@` is written as
 * stored, not prefixed with a quote mark as some exporters do against formula injection. Such a
 * prefix would change the data for every program that reads the file (and make `-5` text), and the
 * file is data, not a spreadsheet; the README says how to open untrusted exports safely.
 */
import type { EncoderColumn } from "../arrow/encode.ts";
import { utf8Bytes, type FormatEncoder, type FormatOptions } from "./encoder.ts";
import { lineRenderer, type TextLayout } from "./text-rows.ts";

const CRLF = "\r\n";
const NEEDS_QUOTES = /[",\r\n]/;

/** A field as RFC 4180 writes it: quoted when it must be; the empty string quoted to differ from NULL. */
export function csvField(text: string): string {
  if (text === "") return '""';
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const layout: TextLayout = {
  // Only text and lists (JSON arrays) can hold a comma, a quote or a line break (numbers, ISO dates
  // and base64 cannot); text and blobs can be empty, which must not read as NULL.
  cell: (kind, form) =>
    kind === "utf8" || kind === "binary" || kind === "list"
      ? (value) => {
          const text = form(value);
          return typeof text === "string" ? csvField(text) : text;
        }
      : form,
  before: (_, index) => (index === 0 ? "" : ","),
  after: "",
  nullText: "",
};

export function createCsvEncoder(columns: EncoderColumn[], options: FormatOptions = {}): FormatEncoder {
  const render = lineRenderer(columns, options, layout);
  const header = columns.map((column) => csvField(column.name)).join(",") + CRLF;
  return {
    head: () => utf8Bytes(header),
    batch: (rows, firstRowIndex) => (rows.length === 0 ? new Uint8Array(0) : utf8Bytes(render(rows, firstRowIndex).join(CRLF) + CRLF)),
    end: () => new Uint8Array(0),
  };
}
