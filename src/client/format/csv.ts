/**
 * CSV (RFC 4180): a header line, CRLF-free `\n` line ends, a field quoted when it holds a comma,
 * a quote or a line break. A null is an empty field; an empty string is `""`, so the two differ.
 */
import { cellText } from "./cells.ts";
import type { DecodedResult } from "./rows.ts";

export function* csvChunks(result: DecodedResult): Generator<string> {
  yield result.columns.map((column) => quote(column.name)).join(",") + "\n";
  for (const row of result.rows()) {
    yield row.map((value, index) => csvField(cellText(result.columns[index]!.kind, value))).join(",") + "\n";
  }
}

function csvField(text: string | null): string {
  if (text === null) return "";
  return text === "" ? '""' : quote(text);
}

function quote(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
