/**
 * Apache Parquet (ARCHITECTURE.md §13), written with `hyparquet-writer` one row group at a time: the
 * magic as the head, a row group whenever ROW_GROUP_ROWS rows have arrived, the footer (schema, row
 * group offsets, statistics) at the end. Memory stays bounded by one row group, never the result.
 *
 * Types follow the Arrow ones (ARCHITECTURE.md §5), so Parquet readers see what Arrow readers see:
 * int64 INT64, float64 DOUBLE, utf8 BYTE_ARRAY STRING, binary BYTE_ARRAY, bool BOOLEAN,
 * date32 INT32 DATE, timestamp INT64 TIMESTAMP(MILLIS, adjusted to UTC); nullable columns OPTIONAL,
 * NOT NULL ones REQUIRED. The other engines' kinds (DESIGN §14): int16 and int32 INT32 with
 * INT_16 / INT_32, float32 FLOAT, decimal128 DECIMAL(p, s) on INT32 up to 9 digits, INT64
 * up to 18, else FIXED_LEN_BYTE_ARRAY of the fewest bytes that hold p digits (as arrow-rs and
 * pyarrow write them); timestamp_us INT64 TIMESTAMP(MICROS) not adjusted to UTC, timestamp_us_utc
 * adjusted; list the standard three-level LIST (`<name>` LIST group, `list` repeated group,
 * `element` optional), nested lists as lists of lists. List columns carry no statistics: the writer
 * would count an empty or NULL list as a null element, a count readers use to skip row groups.
 * Pages are compressed with ZSTD (Bun's native zstd, level 3), which pyarrow, DuckDB, Polars, Spark
 * and arrow-rs read.
 *
 * The library was chosen by measurement: 1,000,000 rows of the benchmark table (bench/dataset.ts)
 * read from SQLite in 16,384-row batches and written as Parquet, in one process on this 2-core
 * machine (wall time includes the ~0.4 s SQLite scan; peak RSS of the whole process; the Arrow
 * stream of the same rows takes 0.45 s, 135 MB):
 *
 * | writer (row group)                   | time   | output  | peak RSS | notes                                   |
 * |--------------------------------------|--------|---------|----------|-----------------------------------------|
 * | hyparquet-writer 0.17, ZSTD (16,384) | 1.1 s  | 3.7 MB  | 160 MB   | chosen: pure JS, synchronous, streams   |
 * | hyparquet-writer, SNAPPY (16,384)    | 1.6 s  | 11.1 MB | 150 MB   | its pure-JS snappy is the slow part     |
 * | hyparquet-writer, SNAPPY (65,536)    | 1.6 s  | 10.4 MB | 250 MB   | memory grows with the row group         |
 * | parquet-wasm 0.8, SNAPPY (65,536)    | 1.3 s  | 14.0 MB | 370 MB   | async streams of WASM record batches;   |
 * |                                      |        |         |          | loads its .wasm from node_modules at    |
 * |                                      |        |         |          | run time: fails in a compiled executable |
 * | @dsnp/parquetjs 1.8.9, uncompressed  | 3.7 s  | 85.5 MB | 400 MB   | one async call per row; 1.9.3 on npm    |
 * |                                      |        |         |          | ships without its code                  |
 * | parquetjs-lite 0.8.7                 |   –    |    –    |    –     | rounds int64 beyond 2^53: refused       |
 *
 * Through this encoder (the same 1M rows, while the machine's load average was 6 on 2 cores):
 * 1.3–1.9 s, 3.8 MB, peak RSS 157–169 MB, against 0.6–1.1 s and 155–180 MB for the Arrow stream;
 * 100,000 rows peak at 115 MB, so memory follows the row group, not the result.
 *
 * hyparquet-writer also ran, through this module, in a worker thread inside a `bun build --compile`
 * executable with its node_modules removed. 16,384-row groups keep the peak within 15% of the Arrow export's; larger
 * groups shrink the file by a few percent at a cost of ~60 MB per 50,000 rows.
 */
import { ByteWriter, ParquetWriter, type SchemaElement } from "hyparquet-writer";
import { fitProblem, ValueDoesNotFit, type EncoderColumn, type Row } from "../arrow/encode.ts";
import { parseIsoDate, parseIsoTimestamp } from "../arrow/datetime.ts";
import { convertValue, DECIMAL_LIMITS, INT64_MAX, INT64_MIN, Misfit, type ArrowValue } from "../arrow/fit.ts";
import { checkColumnType, type ArrowKind, type ColumnType } from "../arrow/types.ts";
import { VERSION } from "../version.ts";
import type { FormatEncoder, FormatOptions } from "./encoder.ts";

/** Rows per row group (see the measurements above). */
export const ROW_GROUP_ROWS = 16_384;
/**
 * A row group is also written once its values hold this many bytes (text and blobs as their
 * length, anything else 8) or ROW_GROUP_MAX_CELLS values: 16,384 rows of 100 KB, or of 1,500
 * columns, would otherwise be held in the encoder whatever the batches' size.
 */
const ROW_GROUP_MAX_BYTES = 8 * 1024 * 1024;
const ROW_GROUP_MAX_CELLS = 16 * ROW_GROUP_ROWS;

const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1"
const ZSTD_LEVEL = 3;

/** The Parquet schema of a result: a root group, then each column's elements (one leaf, or a list's group). */
export function parquetSchema(columns: EncoderColumn[]): SchemaElement[] {
  return [{ name: "root", num_children: columns.length }, ...columns.flatMap((column) => schemaElements(column, column.name, column.nullable))];
}

/** A column's schema elements, depth first: the leaf, or a list's group, its repeated group and its element. */
function schemaElements(type: ColumnType, name: string, nullable: boolean): SchemaElement[] {
  const base = { name, repetition_type: nullable ? "OPTIONAL" : "REQUIRED" } as const;
  switch (type.kind) {
    case "int64":
      return [{ ...base, type: "INT64" }];
    case "float64":
      return [{ ...base, type: "DOUBLE" }];
    case "utf8":
      return [{ ...base, type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } }];
    case "binary":
      return [{ ...base, type: "BYTE_ARRAY" }];
    case "bool":
      return [{ ...base, type: "BOOLEAN" }];
    case "date32":
      return [{ ...base, type: "INT32", converted_type: "DATE", logical_type: { type: "DATE" } }];
    case "timestamp":
      return [
        {
          ...base,
          type: "INT64",
          converted_type: "TIMESTAMP_MILLIS",
          logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
        },
      ];
    // The converted types alone: hyparquet-writer 0.17 writes an INTEGER logical type's bit width
    // as a zigzag i32 where Thrift has an i8, which arrow-rs reads as 32 for 16 and refuses. Every
    // reader maps INT_16 / INT_32 to the same INTEGER(16/32, signed).
    case "int16":
      return [{ ...base, type: "INT32", converted_type: "INT_16" }];
    case "int32":
      return [{ ...base, type: "INT32", converted_type: "INT_32" }];
    case "float32":
      return [{ ...base, type: "FLOAT" }];
    case "decimal128": {
      const precision = type.precision!;
      const scale = type.scale!;
      const decimal = { converted_type: "DECIMAL", precision, scale, logical_type: { type: "DECIMAL", precision, scale } } as const;
      if (precision <= 9) return [{ ...base, type: "INT32", ...decimal }];
      if (precision <= 18) return [{ ...base, type: "INT64", ...decimal }];
      return [{ ...base, type: "FIXED_LEN_BYTE_ARRAY", type_length: decimalBytes(precision), ...decimal }];
    }
    case "timestamp_us":
      // No converted type: TIMESTAMP_MICROS would say the values are adjusted to UTC.
      return [{ ...base, type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: false, unit: "MICROS" } }];
    case "timestamp_us_utc":
      return [{ ...base, type: "INT64", converted_type: "TIMESTAMP_MICROS", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" } }];
    case "list":
      return [
        { ...base, converted_type: "LIST", logical_type: { type: "LIST" }, num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        ...schemaElements(type.child!, "element", true),
      ];
  }
}

/** The fewest bytes whose two's complement holds every unscaled value of `precision` digits. */
function decimalBytes(precision: number): number {
  let bytes = 1;
  while (2n ** BigInt(8 * bytes - 1) <= DECIMAL_LIMITS[precision]!) bytes++;
  return bytes;
}

/** What hyparquet-writer takes for a kind: bigints for INT64 columns, the Arrow value otherwise. */
const parquetValue: Record<ArrowKind, (value: ArrowValue) => unknown> = {
  int64: (x) => BigInt(x as number | bigint),
  timestamp: (x) => BigInt(x as number | bigint),
  float64: (x) => x,
  utf8: (x) => x,
  binary: (x) => x,
  bool: (x) => x,
  date32: (x) => x,
  int16: (x) => x,
  int32: (x) => x,
  float32: (x) => x,
  // The unscaled value: hyparquet-writer writes a bigint as it is, on INT32, INT64 or bytes.
  decimal128: (x) => x,
  timestamp_us: (x) => x,
  timestamp_us_utc: (x) => x,
  list: () => {
    throw new Error("a list is converted element by element (parquetConverter)");
  },
};

/** A column's conversion from its Arrow value: a list's converts each element by its child's. */
function parquetConverter(type: ColumnType): (value: ArrowValue) => unknown {
  if (type.kind !== "list") return parquetValue[type.kind];
  const element = parquetConverter(type.child!);
  return (value) => (value as readonly (ArrowValue | null)[]).map((x) => (x === null ? null : element(x)));
}

/** The common values, converted without `convertValue` (which agrees with them); undefined otherwise. */
const fastValue: Record<ArrowKind, (value: unknown) => unknown> = {
  int64: (v) => (typeof v === "bigint" && v >= INT64_MIN && v <= INT64_MAX ? v : undefined),
  timestamp: (v) => {
    if (typeof v !== "string") return undefined;
    const ms = parseIsoTimestamp(v);
    return ms === ms ? BigInt(ms) : undefined;
  },
  float64: (v) => (typeof v === "number" ? v : undefined),
  utf8: (v) => (typeof v === "string" ? v : undefined),
  binary: (v) => (v instanceof Uint8Array ? v : undefined),
  bool: (v) => (v === 1n ? true : v === 0n ? false : undefined),
  date32: (v) => {
    if (typeof v !== "string") return undefined;
    const days = parseIsoDate(v);
    return days === days ? days : undefined;
  },
  int16: (v) => (typeof v === "number" && (v << 16) >> 16 === v ? v : undefined),
  int32: (v) => (typeof v === "number" && (v | 0) === v ? v : undefined),
  float32: (v) => (typeof v === "number" && Math.fround(v) === v ? v : undefined),
  // Needs the column's precision: convertValue checks it.
  decimal128: () => undefined,
  timestamp_us: (v) => (typeof v === "bigint" && v >= INT64_MIN && v <= INT64_MAX ? v : undefined),
  timestamp_us_utc: (v) => (typeof v === "bigint" && v >= INT64_MIN && v <= INT64_MAX ? v : undefined),
  list: () => undefined,
};

/** What a list's values count towards a row group's bytes: its elements as other values count. */
function listBytes(value: unknown): number {
  if (!Array.isArray(value)) return 8;
  let bytes = 8;
  for (const element of value as unknown[]) {
    bytes += typeof element === "string" ? element.length : element instanceof Uint8Array ? element.byteLength : Array.isArray(element) ? listBytes(element) : 8;
  }
  return bytes;
}

const CREATED_BY = `arrow402 version ${VERSION}`;

/**
 * hyparquet-writer 0.17 writes the empty row group list of a file without rows with element type 0
 * instead of struct, which arrow-rs (parquet-wasm, Polars) refuses: "Expected list element type of
 * Struct but got Byte". In the footer's compact Thrift, that list sits between `num_rows = 0`
 * (0x16 0x00) and `created_by` (0x28, length, text); its header 0x00 becomes 0x0C, "no elements of
 * type struct". The last match is the one: column names, the only free text, come before it.
 */
function typedEmptyRowGroupList(footer: Uint8Array): Uint8Array {
  const createdBy = new TextEncoder().encode(CREATED_BY);
  const pattern = [0x16, 0x00, 0x19, 0x00, 0x28, createdBy.length, ...createdBy];
  for (let at = footer.length - pattern.length; at >= 0; at--) {
    if (pattern.every((byte, i) => footer[at + i] === byte)) {
      footer[at + 3] = 0x0c;
      return footer;
    }
  }
  throw new Error("Parquet footer of an empty result: the row group list was not where hyparquet-writer 0.17 puts it");
}

/** A writer whose bytes are taken out after each row group, each piece in a buffer of its own. */
class DrainedWriter extends ByteWriter {
  take(): Uint8Array {
    const bytes = new Uint8Array(this.buffer.slice(0, this.index));
    this.index = 0;
    return bytes;
  }
}

export function createParquetEncoder(columns: EncoderColumn[], options: FormatOptions = {}, rowGroupRows = ROW_GROUP_ROWS): FormatEncoder {
  const safeIntegers = options.safeIntegers ?? true;
  const rowKeys = options.rowKeys ?? columns.map((column) => column.name);
  const positionKeys = columns.map((_, i) => i);
  columns.forEach(checkColumnType);
  const converters = columns.map(parquetConverter);
  const out = new DrainedWriter();
  const writer = new ParquetWriter({
    writer: out,
    schema: parquetSchema(columns),
    codec: "ZSTD",
    compressors: { ZSTD: (bytes: Uint8Array) => Bun.zstdCompressSync(bytes, { level: ZSTD_LEVEL }) },
    createdBy: CREATED_BY,
  });
  let rowsWritten = 0;
  out.take(); // the magic the constructor wrote: head() returns it
  let pending: unknown[][] = columns.map(() => []);
  let pendingRows = 0;
  let pendingBytes = 0;

  function writeRowGroup(): void {
    if (pendingRows === 0) return;
    writer.write({
      // Text and binary columns carry no min/max: the writer keeps every row group's statistics
      // until the footer, as the values themselves, so rows of a few MB would be held to the end.
      columnData: columns.map((column, c) => ({
        name: column.name,
        data: pending[c]!,
        statistics: column.kind !== "utf8" && column.kind !== "binary" && column.kind !== "list",
      })),
      rowGroupSize: pendingRows,
    });
    pending = columns.map(() => []);
    pendingRows = 0;
    pendingBytes = 0;
  }

  function append(rows: readonly Row[], firstRowIndex: number): void {
    const keys: readonly (string | number)[] = rows.length > 0 && !Array.isArray(rows[0]) ? rowKeys : positionKeys;
    const records = rows as readonly Readonly<Record<PropertyKey, unknown>>[];
    // Converted apart first: a misfit leaves the row group as it was.
    const converted = columns.map((column, c) => {
      const key = keys[c]!;
      const fast = fastValue[column.kind];
      const toParquet = converters[c]!;
      const isList = column.kind === "list";
      const values: unknown[] = new Array(rows.length);
      for (let r = 0; r < rows.length; r++) {
        const value = records[r]![key];
        let parquet = value === null ? undefined : fast(value);
        if (parquet === undefined) {
          const result =
            value === null
              ? column.nullable
                ? null
                : new Misfit(fitProblem(column, null, { nullable: false }) ?? "NULL")
              : convertValue(column, value, safeIntegers);
          // Read column by column: the first misfit found is the first in column order, then row
          // order, the one the Arrow encoder names.
          if (result instanceof Misfit) throw new ValueDoesNotFit(c, firstRowIndex + r, result.detail);
          parquet = result === null ? null : toParquet(result);
        }
        values[r] = parquet;
        pendingBytes += isList ? listBytes(value) : typeof value === "string" ? value.length : value instanceof Uint8Array ? value.byteLength : 8;
      }
      return values;
    });
    rowsWritten += rows.length;
    if (pendingRows === 0) pending = converted;
    else pending = pending.map((values, c) => values.concat(converted[c]!));
    pendingRows += rows.length;
  }

  return {
    head: () => new Uint8Array(MAGIC),
    batch(rows, firstRowIndex) {
      append(rows, firstRowIndex);
      if (pendingRows >= rowGroupRows || pendingBytes >= ROW_GROUP_MAX_BYTES || pendingRows * columns.length >= ROW_GROUP_MAX_CELLS) writeRowGroup();
      return out.take();
    },
    end() {
      writeRowGroup();
      writer.finish();
      const footer = out.take();
      return rowsWritten === 0 ? typedEmptyRowGroupList(footer) : footer;
    },
  };
}
