/**
 * DuckDB's vectors straight into Arrow buffers (ARCHITECTURE.md §9 "The DuckDB engine"), as
 * postgres/copy-arrow.ts does for COPY: for an Arrow answer whose columns are all of the types
 * below, each chunk's values go from DuckDB's vectors into their columns' buffers (fixed-width
 * values copied as they are: DuckDB keeps them little-endian as Arrow does; text as its UTF-8
 * bytes), with no JavaScript value per cell. A 1M-row export made an array per row and a string,
 * bigint or timestamp object per value, only for the encoder to turn them back into bytes; the
 * garbage they left held the server's memory up between collections (BENCHMARKS.md item 8).
 *
 * The bytes are the Arrow encoder's own for the same values (arrow/encode.ts: same batches,
 * validity bitmaps, offsets, zeroed NULL slots), so a result reads as the same bytes whichever path
 * read it (a replay's digest, DESIGN.md §17), and the same values are refused with the same
 * messages at the same rows: values.ts's refusals (±infinity) as a chunk is read, column by column,
 * a NULL in a NOT NULL column when the batch is encoded, as the encoder finds it.
 */
import type { DataChunk, Vector } from "@duckdb/node-bindings";
import { isUtf8 } from "node:buffer";
import { builtBatch, BuiltColumn, BuiltUtf8Column, type Nulls } from "../../arrow/built-columns.ts";
import { ValueDoesNotFit, type ColumnPlan } from "../../arrow/columns.ts";
import type { EncoderColumn } from "../../arrow/encode.ts";
import type { DuckDBBindings as DuckBindings } from "./native-library.ts";
import type { DuckColumnType } from "./types.ts";
import { dateMisfit, timestampMisfit } from "./values.ts";

/** One column of the batch being gathered. */
interface ColumnBuilder {
  /** Appends the chunk's `count` values; a refused value throws ValueDoesNotFit (`column`, the result's row `firstRowIndex + r`). */
  append(vector: Vector, count: number, column: number, firstRowIndex: number): void;
  /** The batch's buffers as a plan of the encoder's (arrow/columns.ts); the builder starts a new batch. */
  plan(): ColumnPlan;
  /** Row (in the batch) of the first NULL, or -1. */
  readonly firstNull: number;
}

/** How a column is copied, by DuckDB type id then Arrow kind: a fixed width in bytes, 0 for bool, -1 for text. */
const WIDTHS: Record<string, number> = {
  "BIGINT:int64": 8,
  "INTEGER:int32": 4,
  "SMALLINT:int16": 2,
  "FLOAT:float32": 4,
  "DOUBLE:float64": 8,
  "DATE:date32": 4,
  "TIMESTAMP:timestamp_us": 8,
  "TIMESTAMP_TZ:timestamp_us_utc": 8,
  "BOOLEAN:bool": 0,
  "VARCHAR:utf8": -1,
};

/** A batch's columns, gathered chunk by chunk, encoded as one record-batch message. */
export class ArrowChunks {
  private constructor(
    private readonly bindings: DuckBindings,
    private readonly builders: ColumnBuilder[],
    private readonly encoder: readonly EncoderColumn[],
  ) {}

  /**
   * The builders for a result whose chunks look like `chunk`, or null when a column is of a type
   * (or a kind) not taken here: then the read makes values of every row (values.ts).
   */
  static forChunk(bindings: DuckBindings, chunk: DataChunk, types: readonly DuckColumnType[], encoder: readonly EncoderColumn[]): ArrowChunks | null {
    if (encoder.length !== types.length || bindings.data_chunk_get_column_count(chunk) !== types.length) return null;
    const builders: ColumnBuilder[] = [];
    for (let c = 0; c < types.length; c++) {
      const typeId = bindings.get_type_id(bindings.vector_get_column_type(bindings.data_chunk_get_vector(chunk, c)));
      const pair = `${bindings.Type[typeId]}:${types[c]!.kind}`;
      if (!(pair in WIDTHS) || encoder[c]!.kind !== types[c]!.kind) return null;
      const width = WIDTHS[pair]!;
      const nullable = encoder[c]!.nullable;
      if (width === 0 && bindings.sizeof_bool !== 1) return null;
      builders.push(
        width === -1
          ? new Utf8Builder(bindings, nullable)
          : width === 0
            ? new BoolBuilder(bindings, nullable)
            : new FixedBuilder(bindings, width, nullable, CHECKS[types[c]!.kind] ?? null),
      );
    }
    return new ArrowChunks(bindings, builders, encoder);
  }

  /** Appends the chunk's rows, the first of them the result's row `firstRowIndex`; throws ValueDoesNotFit. */
  append(chunk: DataChunk, count: number, firstRowIndex: number): void {
    for (let c = 0; c < this.builders.length; c++) this.builders[c]!.append(this.bindings.data_chunk_get_vector(chunk, c), count, c, firstRowIndex);
  }

  /**
   * The record-batch message of the `rows` rows appended since the last one, or the encoder's
   * ValueDoesNotFit for the first NULL in a NOT NULL column (first such column, then its first row,
   * as arrow/encode.ts firstMisfit names it).
   */
  batch(rows: number, firstRowIndex: number): Uint8Array {
    return builtBatch(this.builders, this.encoder, rows, firstRowIndex);
  }
}

/** A chunk's NULL rows (0-based in the chunk), from DuckDB's validity mask: bit r of little-endian 64-bit words, as Arrow's bitmap. */
function chunkNulls(bindings: DuckBindings, vector: Vector, count: number): number[] {
  const nulls: number[] = [];
  // No mask: every value is valid.
  const mask = bindings.vector_get_validity(vector, Math.ceil(count / 64) * 8) as Uint8Array | null;
  if (!mask) return nulls;
  for (let byte = 0; byte < (count + 7) >> 3; byte++) {
    const bits = mask[byte]!;
    if (bits === 0xff) continue;
    for (let bit = 0; bit < 8; bit++) {
      const row = (byte << 3) | bit;
      if (row < count && (bits & (1 << bit)) === 0) nulls.push(row);
    }
  }
  return nulls;
}

/** A chunk's NULL rows, `at` rows into the batch. */
function addNulls(nulls: Nulls, chunkNulls: readonly number[], at: number): void {
  for (const row of chunkNulls) nulls.rows.push(at + row);
}

/** Checks the `count` values at byte `at` of `bytes` (NULLs zeroed), throwing a refusal with values.ts's message. */
type ValueCheck = (bytes: Uint8Array, at: number, count: number, column: number, firstRowIndex: number) => void;

/** DuckDB's ±infinity dates (values.ts): no Date32 value. */
const checkDates: ValueCheck = (bytes, at, count, column, firstRowIndex) => {
  const days = new Int32Array(bytes.buffer, bytes.byteOffset + at, count);
  for (let r = 0; r < count; r++) {
    const value = days[r]!;
    if (value >= 0x7fff_ffff || value <= -0x7fff_ffff) throw new ValueDoesNotFit(column, firstRowIndex + r, dateMisfit(value)!);
  }
};

/** DuckDB's ±infinity timestamps, int64's extremes (values.ts): no Timestamp value. Read as two int32 words, no bigint per value. */
const checkTimestamps: ValueCheck = (bytes, at, count, column, firstRowIndex) => {
  const words = new Int32Array(bytes.buffer, bytes.byteOffset + at, count * 2);
  for (let r = 0; r < count; r++) {
    const low = words[2 * r]!;
    const high = words[2 * r + 1]!;
    // 2^63 - 1: high 0x7fffffff, low all ones; -(2^63 - 1) and -2^63: high -2^31, low 1 or 0.
    if ((high === 0x7fff_ffff && low === -1) || (high === -0x8000_0000 && (low === 0 || low === 1))) {
      throw new ValueDoesNotFit(column, firstRowIndex + r, timestampMisfit(high > 0));
    }
  }
};

const CHECKS: Partial<Record<string, ValueCheck>> = { date32: checkDates, timestamp_us: checkTimestamps, timestamp_us_utc: checkTimestamps };

class FixedBuilder extends BuiltColumn implements ColumnBuilder {
  constructor(
    private readonly bindings: DuckBindings,
    private readonly width: number,
    nullable: boolean,
    private readonly check: ValueCheck | null,
  ) {
    super(nullable);
  }

  append(vector: Vector, count: number, column: number, firstRowIndex: number): void {
    const width = this.width;
    const at = this.n * width;
    this.data.ensure(at + count * width);
    const bytes = this.data.bytes;
    bytes.set(this.bindings.vector_get_data(vector, count * width), at);
    const nulls = chunkNulls(this.bindings, vector, count);
    // A NULL's slot holds whatever DuckDB left there; the encoder leaves it as the zeroed message buffer has it.
    for (const row of nulls) bytes.fill(0, at + row * width, at + (row + 1) * width);
    this.check?.(bytes, at, count, column, firstRowIndex);
    addNulls(this.nulls, nulls, this.n);
    this.n += count;
  }

  plan(): ColumnPlan {
    return this.flatBatch(this.n * this.width);
  }
}

/** DuckDB's booleans are a byte each; Arrow's a bit. */
class BoolBuilder extends BuiltColumn implements ColumnBuilder {
  constructor(
    private readonly bindings: DuckBindings,
    nullable: boolean,
  ) {
    super(nullable);
  }

  append(vector: Vector, count: number): void {
    const values = this.bindings.vector_get_data(vector, count);
    const nulls = chunkNulls(this.bindings, vector, count);
    let skip = 0;
    this.data.ensure(((this.n + count + 7) >> 3) + 1);
    const bits = this.data.bytes;
    for (let r = 0; r < count; r++) {
      const row = this.n + r;
      if ((row & 7) === 0) bits[row >> 3] = 0;
      if (skip < nulls.length && nulls[skip] === r) skip++;
      else if (values[r] !== 0) bits[row >> 3]! |= 1 << (row & 7);
    }
    addNulls(this.nulls, nulls, this.n);
    this.n += count;
  }

  plan(): ColumnPlan {
    return this.flatBatch((this.n + 7) >> 3);
  }
}

const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

/**
 * VARCHAR vectors hold a 16-byte string_t per value: its length, then the bytes themselves when
 * they are 12 or fewer, else a pointer to them, read through the driver. A call per value was a
 * quarter of the server's time under four exports; but a chunk's longer strings mostly lie one
 * right after the other (a Parquet page's, a string heap's: ~5 runs per 2,048 values), so a run of
 * strings each starting where the one before ends is read with one call. The run's bytes are
 * exactly its strings' own, which DuckDB keeps readable while the chunk lives: nothing between or
 * around them is read.
 */
class Utf8Builder extends BuiltUtf8Column implements ColumnBuilder {
  constructor(
    private readonly bindings: DuckBindings,
    nullable: boolean,
  ) {
    super(nullable);
  }

  append(vector: Vector, count: number): void {
    const strings = this.bindings.vector_get_data(vector, count * 16);
    const view = new DataView(strings.buffer, strings.byteOffset, strings.byteLength);
    const nulls = chunkNulls(this.bindings, vector, count);
    this.offsetsFor(this.n + count);
    const offsets = this.offsets;
    let skip = 0;
    let end = this.end;
    // The run of out-of-line strings not yet read: where its first pointer sits in `strings`, the
    // address just past its last byte (pointers as doubles: exact below 2^53), its bytes, and where they go.
    let runAt = -1;
    let runEndAddress = 0;
    let runBytes = 0;
    let runOut = 0;
    const readRun = () => {
      this.data.bytes.set(this.bindings.get_data_from_pointer(strings.buffer as ArrayBuffer, strings.byteOffset + runAt + 8, runBytes), runOut);
      runAt = -1;
    };
    for (let r = 0; r < count; r++) {
      if (skip < nulls.length && nulls[skip] === r) skip++;
      else {
        const at = r * 16;
        const length = view.getUint32(at, true);
        this.data.ensure(end + length);
        if (length <= 12) {
          if (length > 0 && runAt >= 0) readRun();
          const out = this.data.bytes;
          for (let i = 0; i < length; i++) out[end + i] = strings[at + 4 + i]!;
        } else {
          const address = view.getUint32(at + 12, true) * 4_294_967_296 + view.getUint32(at + 8, true);
          if (runAt >= 0 && address === runEndAddress) runBytes += length;
          else {
            if (runAt >= 0) readRun();
            runAt = at;
            runBytes = length;
            runOut = end;
          }
          runEndAddress = address + length;
        }
        end += length;
      }
      offsets[this.n + r + 1] = end;
    }
    if (runAt >= 0) readRun();
    this.end = end;
    addNulls(this.nulls, nulls, this.n);
    this.n += count;
  }

  plan(): ColumnPlan {
    // DuckDB's text is UTF-8 as it checks it; the values path decodes it replacing what is not (U+FFFD), and so does this.
    if (isUtf8(this.data.bytes.subarray(0, this.end))) return this.utf8Batch();
    const { data, offsets, bytes } = replaced(this.data.bytes, this.offsets, this.n);
    return this.utf8Batch(data, offsets, bytes);
  }
}

/** The values as TextDecoder reads them (what the values path encodes): each one decoded and encoded again. */
function replaced(data: Uint8Array, offsets: Int32Array, rows: number): { data: Uint8Array; offsets: Int32Array; bytes: number } {
  const values: Uint8Array[] = [];
  const out = new Int32Array(rows + 1);
  for (let r = 0; r < rows; r++) {
    const value = utf8Encoder.encode(utf8Decoder.decode(data.subarray(offsets[r]!, offsets[r + 1]!)));
    values.push(value);
    out[r + 1] = out[r]! + value.byteLength;
  }
  const joined = new Uint8Array(out[rows]!);
  for (let r = 0; r < rows; r++) joined.set(values[r]!, out[r]!);
  return { data: joined, offsets: out, bytes: out[rows]! };
}
