/**
 * Output formats of `arrow402 query`: `table` for a terminal, `csv`, `json`, `ndjson`, and `arrow`
 * (the server's Arrow IPC stream, byte for byte). Without --format: a file's extension decides,
 * else a table on a terminal and Arrow when the output is piped or redirected.
 */
import { extname } from "node:path";
import { csvChunks } from "./csv.ts";
import { jsonChunks, ndjsonChunks } from "./json.ts";
import { decodeArrow } from "./rows.ts";
import { textTableChunks } from "./text-table.ts";

export const FORMATS = ["table", "csv", "json", "ndjson", "arrow"] as const;
export type OutputFormat = (typeof FORMATS)[number];

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

/** Decodes the stream (also for `arrow`, so a broken stream is caught and rows are counted). */
export function render(format: OutputFormat, arrowBytes: Uint8Array): Rendered {
  const result = decodeArrow(arrowBytes);
  const chunks =
    format === "arrow"
      ? [arrowBytes]
      : format === "csv"
        ? csvChunks(result)
        : format === "json"
          ? jsonChunks(result)
          : format === "ndjson"
            ? ndjsonChunks(result)
            : textTableChunks(result);
  return { rowCount: result.rowCount, chunks };
}
