/**
 * A query result as MCP's `structuredContent` (ARCHITECTURE.md §12): `{columns: [{name, type}], rows:
 * [[…]], row_count}`, read back from the Arrow IPC stream the query service delivered, so an agent
 * gets exactly the values an HTTP buyer gets. Values are those of the JSON format
 * (formats/json-values.ts, formats/json.ts): int64 a number while it is a safe integer and a string
 * of its exact digits beyond (DESIGN §16: the MCP SDK parses with `JSON.parse`, which would round
 * 9007199254740993 to 9007199254740992), dates `YYYY-MM-DD`, timestamps ISO-8601 UTC with
 * milliseconds, blobs base64, floats the shortest text that reads back (`-0`, and `1e999` /
 * `-1e999` for the infinities JSON has no literal for).
 *
 * Columns of types the SQLite engine never makes are read generically, for engines that do:
 * unsigned 64-bit integers like int64, Decimal (PostgreSQL numeric(p,s), DuckDB HUGEINT as
 * Decimal128(38,0)) always as a string of its exact digits at the column's scale
 * (formats/decimal.ts), Int16/Int32 numbers, Float32 its shortest text as a number, Timestamp(µs)
 * ISO-8601 with microseconds (`Z` only with a zone), List an array of its elements read the same way,
 * Struct an object of its members read the same way.
 *
 * Int64, Decimal, Date32 and Timestamp values are read from the column's buffers rather than through
 * apache-arrow's `get`, which turns timestamps into numbers, throws beyond 2^53 and gives a
 * decimal's words.
 */
import { DataType, Precision, RecordBatchReader, TimeUnit, type Vector } from "apache-arrow";
import type { QueryResult } from "../results/executor.ts";
import type { JsonCell, RawJson } from "../formats/json-values.ts";
import { isoDate, isoMicroseconds, isoTimestamp } from "../formats/iso.ts";
import { base64, float32Text, floatText } from "../formats/text-values.ts";
import { jsonFloat } from "../formats/json.ts";
import { concatBytes } from "../formats/encoder.ts";
import { decimalText, unscaledAt } from "../formats/decimal.ts";

export interface ResultColumn {
  name: string;
  /** The Arrow type as the HTTP endpoint streams it (`DataType.toString()`, ARCHITECTURE.md §3). */
  type: string;
}

export interface QueryRows {
  columns: ResultColumn[];
  rows: JsonCell[][];
  row_count: number;
}

const rawJSON = (JSON as unknown as { rawJSON(text: string): RawJson }).rawJSON;

/** A cell of a record batch's column (one Data chunk), not null. */
type CellReader = (vector: Vector, index: number) => JsonCell;

/** Any 64-bit integer (Int64, Uint64), signed or not. */
const int64Reader: CellReader = (vector, i) => int64Cell(valueAt<BigInt64Array | BigUint64Array>(vector, i));

/** By Arrow type name (`DataType.toString()` up to its first `<`); others read through `get`. */
const READERS: Record<string, CellReader> = {
  Float64: (vector, i) => floatCell(valueAt<Float64Array>(vector, i)),
  Date32: (vector, i) => isoDate(valueAt<Int32Array>(vector, i)),
  Timestamp: (vector, i) => isoTimestamp(exactNumber(valueAt<BigInt64Array>(vector, i))),
  Binary: (vector, i) => base64(vector.get(i) as Uint8Array),
};

/** Utf8 and Bool: apache-arrow's own value (a string, a boolean). */
const viaGet: CellReader = (vector, i) => vector.get(i) as string | boolean;

function cellReader(type: DataType): CellReader {
  if (DataType.isInt(type) && type.bitWidth === 64) return int64Reader;
  if (DataType.isDecimal(type)) return (vector, i) => decimalText(unscaledAt(vector as Vector<typeof type>, i), type.scale);
  if (DataType.isTimestamp(type) && type.unit === TimeUnit.MICROSECOND) {
    // A zone names an instant, written in UTC; without one the value is a wall-clock time.
    const utc = type.timezone !== null && type.timezone !== undefined && type.timezone !== "";
    return (vector, i) => isoMicroseconds(valueAt<BigInt64Array>(vector, i), utc);
  }
  if (DataType.isFloat(type) && type.precision === Precision.SINGLE) return (vector, i) => float32Cell(valueAt<Float32Array>(vector, i));
  if (DataType.isList(type)) {
    const element = cellReader(type.children[0]!.type);
    return (vector, i) => {
      const elements = vector.get(i) as Vector;
      return Array.from({ length: elements.length }, (_, j) => (elements.isValid(j) ? element(elements, j) : null));
    };
  }
  if (DataType.isStruct(type)) {
    const members = type.children.map((field, m) => ({ name: field.name, m, read: cellReader(field.type) }));
    return (vector, i) => {
      const cell: { [member: string]: JsonCell } = {};
      for (const { name, m, read } of members) {
        const child = vector.getChildAt(m)!;
        // defineProperty: a member named __proto__ is a property like any other.
        Object.defineProperty(cell, name, { value: child.isValid(i) ? read(child, i) : null, enumerable: true, writable: true, configurable: true });
      }
      return cell;
    };
  }
  return READERS[String(type).split("<")[0]!] ?? viaGet;
}

/** Decodes a whole (small) result: under the MCP row cap the query service collected it. */
export async function queryRows(result: QueryResult): Promise<QueryRows> {
  const bytes = "complete" in result ? result.complete : await collect(result.body);
  const reader = RecordBatchReader.from(concatBytes(bytes));
  reader.open();
  const columns = reader.schema.fields.map((field) => ({ name: field.name, type: String(field.type) }));
  const readers = reader.schema.fields.map((field) => cellReader(field.type));
  const rows: JsonCell[][] = [];
  for (const batch of reader) {
    const vectors = columns.map((_, c) => batch.getChildAt(c)!);
    for (let r = 0; r < batch.numRows; r++) {
      rows.push(vectors.map((vector, c) => (vector.isValid(r) ? readers[c]!(vector, r) : null)));
    }
  }
  return { columns, rows, row_count: rows.length };
}

/**
 * The raw value in a record batch's column, whose data is one chunk. A sliced chunk (a List's
 * elements) has its values sliced too: `data.offset` counts only in its validity bitmap.
 */
function valueAt<T extends { [index: number]: number | bigint }>(vector: Vector, index: number): T[number] {
  return (vector.data[0]!.values as unknown as T)[index]!;
}

function int64Cell(value: bigint): JsonCell {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value.toString();
}

/** `JSON.stringify` writes -0 as `0` and ±Infinity as `null`: those keep their JSON format text. */
function floatCell(value: number): JsonCell {
  if (Number.isFinite(value) && !Object.is(value, -0)) return value;
  if (Number.isNaN(value)) return null;
  return rawJSON(jsonFloat(floatText(value)));
}

/** The text formats' float32: its shortest text, read as a number; -0 and ±Infinity as floatCell. */
function float32Cell(value: number): JsonCell {
  if (Number.isFinite(value) && !Object.is(value, -0)) return Number(float32Text(value));
  return floatCell(value);
}

function exactNumber(value: bigint): number | bigint {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

async function collect(body: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return chunks;
}
