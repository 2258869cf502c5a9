/**
 * The output formats (ARCHITECTURE.md §13), as plain data: what a response says it is, what a download is
 * named, and how to make an encoder. Only a format's name travels in the worker protocol; the
 * worker looks its factory up here.
 */
import { createArrowEncoder } from "./arrow.ts";
import { createCsvEncoder } from "./csv.ts";
import type { EncoderFactory } from "./encoder.ts";
import { createJsonEncoder, createNdjsonEncoder } from "./json.ts";
import { createParquetEncoder } from "./parquet.ts";

export type FormatName = "arrow" | "csv" | "json" | "ndjson" | "parquet";

export interface OutputFormat {
  name: FormatName;
  /** The media type `Accept` names and `Content-Type` carries, without parameters. */
  mediaType: string;
  /** The full `Content-Type` of a response. */
  contentType: string;
  /** Other media types that ask for this format in `Accept` (common unregistered names). */
  alsoAccepted: readonly string[];
  /** File name extension for downloads, without the dot. */
  extension: string;
  create: EncoderFactory;
}

/** In order of preference when a client accepts several equally (Arrow first: the default). */
export const FORMATS: readonly OutputFormat[] = [
  {
    name: "arrow",
    mediaType: "application/vnd.apache.arrow.stream",
    contentType: "application/vnd.apache.arrow.stream",
    alsoAccepted: [],
    extension: "arrow",
    create: createArrowEncoder,
  },
  {
    name: "csv",
    mediaType: "text/csv",
    contentType: "text/csv; charset=utf-8; header=present",
    alsoAccepted: [],
    extension: "csv",
    create: createCsvEncoder,
  },
  {
    name: "json",
    mediaType: "application/json",
    contentType: "application/json",
    alsoAccepted: [],
    extension: "json",
    create: createJsonEncoder,
  },
  {
    name: "ndjson",
    mediaType: "application/x-ndjson",
    contentType: "application/x-ndjson",
    alsoAccepted: ["application/jsonl", "application/x-jsonlines"],
    extension: "ndjson",
    create: createNdjsonEncoder,
  },
  {
    name: "parquet",
    mediaType: "application/vnd.apache.parquet",
    contentType: "application/vnd.apache.parquet",
    alsoAccepted: ["application/x-parquet"],
    extension: "parquet",
    create: createParquetEncoder,
  },
];

export const DEFAULT_FORMAT: OutputFormat = FORMATS[0]!;

const byName = new Map<string, OutputFormat>(FORMATS.map((format) => [format.name, format]));

/** The format of a name (as the worker protocol carries it); undefined for an unknown name. */
export function formatNamed(name: string): OutputFormat | undefined {
  return byName.get(name);
}
