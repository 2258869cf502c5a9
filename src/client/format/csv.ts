/**
 * CSV (RFC 4180): a header line, CRLF-free `\n` line ends, a field quoted when it holds a comma,
 * a quote or a line break. A null is an empty field; an empty string is `""`, so the two differ.
 *
 * CSV has no escape of its own, so a value's control characters (an ESC that starts a terminal
 * sequence, a CR that overwrites a line) are written as visible `\u{…}` escapes unless `exact`
 * is asked for — a regular file, which no terminal reads on the way (DESIGN §17). Tabs and line
 * feeds, quoted, are kept either way.
 */
import { printableText } from "../printable.ts";
import { cellText } from "./cells.ts";
import type { DecodedResult } from "./rows.ts";

export function* csvChunks(result: DecodedResult, exact = false): Generator<string> {
  const text = exact ? (value: string) => value : printableText;
  yield result.columns.map((column) => quote(text(column.name))).join(",") + "\n";
  for (const row of result.rows()) {
    yield row.map((value, index) => csvField(cellText(result.columns[index]!.kind, value), text)).join(",") + "\n";
  }
}

function csvField(value: string | null, text: (value: string) => string): string {
  if (value === null) return "";
  return value === "" ? '""' : quote(text(value));
}

function quote(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
