/**
 * A row as plain JSON values, for results that travel inside another JSON document (an MCP tool's
 * `structuredContent`, ARCHITECTURE.md §12): the same values, the same misfits and the same text as the
 * JSON format. `JSON.stringify` of a row gives exactly the JSON format's text of its values.
 *
 * int64 is a number while it is a safe integer and a string of its exact digits beyond (DESIGN §16,
 * formats/json.ts), a decimal always a string of its exact digits; dates and timestamps are
 * ISO-8601 strings, blobs base64 strings, ±Infinity `1e999` / `-1e999` (a `JSON.rawJSON`, so that
 * `JSON.stringify` writes them as the format does), lists arrays of such values, structs objects.
 */
import type { EncoderColumn, Row } from "../arrow/encode.ts";
import type { ArrowKind } from "../arrow/types.ts";
import type { FormatOptions } from "./encoder.ts";
import { lineRenderer, type TextLayout } from "./text-rows.ts";
import { jsonCell } from "./json.ts";

/** What `JSON.rawJSON` returns: serialised by `JSON.stringify` as its text, verbatim. */
export interface RawJson {
  readonly rawJSON: string;
}

export type JsonCell = string | number | boolean | null | RawJson | JsonCell[] | { [member: string]: JsonCell };

const rawJSON = (JSON as unknown as { rawJSON(text: string): RawJson }).rawJSON;

/** Each cell written as its own JSON text, separated by a character JSON text never holds raw. */
const SEPARATOR = "\u0000";

const layout: TextLayout = {
  cell: (kind, form) => jsonCell[kind](form),
  before: (_, index) => (index === 0 ? "" : SEPARATOR),
  after: "",
  nullText: "null",
};

const STRING_KINDS = new Set<ArrowKind>(["utf8", "binary", "date32", "timestamp", "decimal128", "timestamp_us", "timestamp_us_utc"]);

/**
 * Converts batches of rows to arrays of JSON values, column order; throws ValueDoesNotFit (with
 * the row's position in the result) like every encoder.
 */
export function createJsonValues(columns: EncoderColumn[], options: FormatOptions = {}) {
  const render = lineRenderer(columns, options, layout);
  const parse = columns.map((column) =>
    STRING_KINDS.has(column.kind) ? parseString : column.kind === "int64" ? parseInteger : column.kind === "list" || column.kind === "struct" ? parseNested : parseOther,
  );
  return (rows: readonly Row[], firstRowIndex = 0): JsonCell[][] =>
    render(rows, firstRowIndex).map((line) => line.split(SEPARATOR).map((text, c) => parse[c]!(text)));
}

function parseString(text: string): JsonCell {
  return text === "null" ? null : (JSON.parse(text) as string);
}

/** The JSON format writes a safe integer as a number and any other as a string of its digits. */
function parseInteger(text: string): JsonCell {
  if (text === "null") return null;
  return text.startsWith('"') ? text.slice(1, -1) : Number(text);
}

/**
 * Booleans and floats. `JSON.stringify` writes -0 as `0` and ±Infinity as `null`: those keep their
 * JSON format text (`-0`, `1e999`, `-1e999`) as raw JSON.
 */
function parseOther(text: string): JsonCell {
  const value = JSON.parse(text) as JsonCell;
  return typeof value === "number" && (!Number.isFinite(value) || Object.is(value, -0)) ? rawJSON(text) : value;
}

/**
 * A list's JSON array or a struct's JSON object, its floats kept as the format writes them (-0,
 * `1e999`) as in `parseOther`. JSON.parse makes a member named `__proto__` an own property.
 */
function parseNested(text: string): JsonCell {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && (!Number.isFinite(value) || Object.is(value, -0)) ? rawJSON(context?.source ?? String(value)) : value,
  ) as JsonCell;
}
