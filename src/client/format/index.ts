/**
 * Output formats of `arrow402 query`: `table` for a terminal, `csv`, `json`, `ndjson`, `arrow`
 * (the server's Arrow IPC stream, byte for byte) and `parquet` (the server's Parquet file, byte for
 * byte). Without --format: a file's extension decides, else a table on a terminal and Arrow when
 * the output is piped or redirected.
 *
 * Which side makes the output (ARCHITECTURE.md §13): `arrow` and `parquet` are the server's bytes, asked
 * for with `Accept`. `table`, `csv`, `json` and `ndjson` are rendered here from the Arrow stream,
 * as they always were (hex blobs, LF line ends, the terminal table), rather than taken from the
 * server's text formats (base64 blobs, CRLF in CSV), so their output does not change with the
 * server's version; int64 keeps every digit either way.
 */
import { extname } from "node:path";
import { csvChunks } from "./csv.ts";
import { jsonChunks, ndjsonChunks } from "./json.ts";
import { parquetRowCount } from "./parquet.ts";
import { decodeArrow, fileChunks, type DecodedResult } from "./rows.ts";
import { textTableChunks } from "./text-table.ts";

export const FORMATS = ["table", "csv", "json", "ndjson", "arrow", "parquet"] as const;
export type OutputFormat = (typeof FORMATS)[number];

export const ARROW_STREAM = "application/vnd.apache.arrow.stream";
export const PARQUET = "application/vnd.apache.parquet";

/** The media type asked of the server (`Accept`) for an output format. */
export function mediaTypeFor(format: OutputFormat): string {
  return format === "parquet" ? PARQUET : ARROW_STREAM;
}

/** Formats written as the server's binary bytes, never to a terminal. */
export function isBinary(format: OutputFormat): boolean {
  return format === "arrow" || format === "parquet";
}

export function isFormat(text: string): text is OutputFormat {
  return (FORMATS as readonly string[]).includes(text);
}

const BY_EXTENSION: Readonly<Record<string, OutputFormat>> = {
  ".csv": "csv",
  ".json": "json",
  ".ndjson": "ndjson",
  ".jsonl": "ndjson",
  ".arrow": "arrow",
  ".arrows": "arrow",
  ".parquet": "parquet",
  ".txt": "table",
};

export function defaultFormat(outputPath: string | null, stdoutIsTerminal: boolean): OutputFormat {
  if (outputPath !== null) return BY_EXTENSION[extname(outputPath).toLowerCase()] ?? "arrow";
  return stdoutIsTerminal ? "table" : "arrow";
}

export interface Rendered {
  rowCount: number;
  chunks: Iterable<string | Uint8Array>;
}

export interface RenderOptions {
  /**
   * CSV values byte for byte, control characters included: only for a regular file, which no
   * terminal reads on the way. Otherwise they are written as visible escapes (csv.ts); `table`
   * always shows them so and JSON always escapes them (DESIGN §17).
   */
  exact?: boolean;
}

/**
 * The output from the server's body, written to a file as it arrived (DESIGN §17): a Parquet file
 * is checked from its footer and counted; an Arrow stream is read through (also for `arrow`, so
 * that a broken stream is caught and rows are counted) and rendered a batch at a time, so that
 * memory does not grow with the answer.
 */
export async function render(format: OutputFormat, path: string, options: RenderOptions = {}): Promise<Rendered> {
  if (format === "parquet") return { rowCount: await parquetRowCount(path), chunks: fileChunks(path) };
  const result = decodeArrow(path);
  return { rowCount: result.rowCount, chunks: format === "arrow" ? fileChunks(path) : textChunks(format, result, options) };
}

function textChunks(format: Exclude<OutputFormat, "arrow" | "parquet">, result: DecodedResult, options: RenderOptions): Iterable<string> {
  switch (format) {
    case "csv":
      return csvChunks(result, options.exact === true);
    case "json":
      return jsonChunks(result);
    case "ndjson":
      return ndjsonChunks(result);
    case "table":
      return textTableChunks(result);
  }
}
