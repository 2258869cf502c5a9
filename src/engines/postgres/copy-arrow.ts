/**
 * Binary COPY values straight into Arrow buffers (ARCHITECTURE.md §9 "The PostgreSQL engine"): for
 * an Arrow response whose columns are all of the kinds below, each value's bytes go from the COPY
 * chunk into its column's buffer (big-endian to little-endian, UTF-8 text copied as bytes, PostgreSQL's
 * 2000 epoch moved to 1970), with no JS value per cell. A 1M-row export spent most of its time
 * making strings and bigints from the wire only for the encoder to turn them back into bytes.
 *
 * The bytes are the Arrow encoder's own for the same values (arrow/encode.ts: same batch
 * boundaries, validity bitmaps, offsets, zeroed null slots), so a result reads as the same bytes
 * whichever path read it (a replay's digest, DESIGN.md §17), and the same values are refused
 * with the same messages: decode-values.ts's refusals (±infinity, text that is not UTF-8) while
 * decoding, a NULL in a NOT NULL column when the batch is encoded, as the encoder finds it.
 */
import { isUtf8 } from "node:buffer";
import { builtBatch, BuiltColumn, BuiltUtf8Column } from "../../arrow/built-columns.ts";
import type { ColumnPlan } from "../../arrow/columns.ts";
import type { EncoderColumn } from "../../arrow/encode.ts";
import type { ArrowFrame } from "../pulled-read.ts";
import { Refusal } from "./value-refusal.ts";
import { timestamp, WireMismatch } from "./decode-values.ts";
import type { DecodeColumn, PgWire } from "./types.ts";

/** One column of the batch being decoded. */
export interface ColumnBuilder {
  /** Appends the `len` bytes at `pos` of `buf` (`dv` views the same bytes); throws Refusal or WireMismatch. */
  value(buf: Buffer, dv: DataView, pos: number, len: number): void;
  nullValue(): void;
  /** The batch's buffers as a plan of the encoder's (arrow/columns.ts); the builder starts a new batch. */
  plan(): ColumnPlan;
  /** Row (in the batch) of the first NULL, or -1. */
  readonly firstNull: number;
  /** Bytes of the buffers it keeps from batch to batch. */
  readonly retainedBytes: number;
}

const EPOCH_DAYS = 10_957;
const EPOCH_US = 946_684_800_000_000;
const INT32_MAX = 0x7fff_ffff;
const INT32_MIN = -0x8000_0000;
const TWO_32 = 4_294_967_296;

/** The (wire, Arrow kind) pairs taken straight into Arrow buffers. */
const WIDTHS: Record<string, number> = {
  "int2:int16": 2,
  "int4:int32": 4,
  "int8:int64": 8,
  "float4:float32": 4,
  "float8:float64": 8,
  "date:date32": 4,
  "timestamp:timestamp_us": 8,
  "timestamp:timestamp_us_utc": 8,
  "bool:bool": 0,
  "text:utf8": -1,
};

function pairOf(wire: PgWire, kind: string): string | null {
  return typeof wire === "string" ? `${wire}:${kind}` : null;
}

/** Whether every column can be taken straight into Arrow buffers (else the rows are decoded as values). */
export function arrowDirect(columns: readonly DecodeColumn[], encoder: readonly EncoderColumn[]): boolean {
  return (
    columns.length === encoder.length &&
    columns.every((column, i) => {
      const pair = pairOf(column.wire, column.type.kind);
      return pair !== null && pair in WIDTHS && encoder[i]!.kind === column.type.kind;
    })
  );
}

export function columnBuilders(columns: readonly DecodeColumn[], encoder: readonly EncoderColumn[]): ColumnBuilder[] {
  return columns.map((column, i) => {
    const nullable = encoder[i]!.nullable;
    const pair = pairOf(column.wire, column.type.kind)!;
    return pair === "text:utf8" ? new Utf8Builder(nullable) : pair === "bool:bool" ? new BoolBuilder(nullable) : new FixedBuilder(pair, WIDTHS[pair]!, nullable);
  });
}

/**
 * The record-batch message of `rows` rows from the builders (with `frame` around it in the same
 * buffer), or the encoder's ValueDoesNotFit for the first NULL in a NOT NULL column (first such
 * column, then its first row, as firstMisfit names it).
 */
export function arrowBatch(builders: ColumnBuilder[], encoder: readonly EncoderColumn[], rows: number, firstRowIndex: number, frame?: ArrowFrame): Uint8Array {
  return builtBatch(builders, encoder, rows, firstRowIndex, frame);
}

function fixed(name: string, expected: number, len: number): void {
  if (len !== expected) throw new WireMismatch(`a ${len}-byte value where ${name} has ${expected} bytes`);
}


/** Writes one value's wire bytes at `at` of `out`, little-endian; throws Refusal or WireMismatch. */
type FixedWrite = (out: DataView, at: number, dv: DataView, pos: number, len: number) => void;

const FIXED: Record<string, FixedWrite> = {
  "int8:int64": (out, at, dv, pos, len) => {
    fixed("int8", 8, len);
    out.setInt32(at, dv.getInt32(pos + 4), true);
    out.setInt32(at + 4, dv.getInt32(pos), true);
  },
  "float8:float64": (out, at, dv, pos, len) => {
    fixed("float8", 8, len);
    out.setFloat64(at, dv.getFloat64(pos), true);
  },
  "int4:int32": (out, at, dv, pos, len) => {
    fixed("int4", 4, len);
    out.setInt32(at, dv.getInt32(pos), true);
  },
  "int2:int16": (out, at, dv, pos, len) => {
    fixed("int2", 2, len);
    out.setInt16(at, dv.getInt16(pos), true);
  },
  "float4:float32": (out, at, dv, pos, len) => {
    fixed("float4", 4, len);
    out.setFloat32(at, dv.getFloat32(pos), true);
  },
  "date:date32": (out, at, dv, pos, len) => {
    fixed("a date", 4, len);
    const days = dv.getInt32(pos);
    if (days === INT32_MAX) throw new Refusal("date 'infinity' is no day a date column holds");
    if (days === INT32_MIN) throw new Refusal("date '-infinity' is no day a date column holds");
    out.setInt32(at, days + EPOCH_DAYS, true);
  },
  "timestamp:timestamp_us": timestampWrite,
  "timestamp:timestamp_us_utc": timestampWrite,
};

/** µs since 2000 → since 1970: exact in a double within ±2^52 µs of 2000 (±142 years), as decode-values.ts reads it. */
function timestampWrite(out: DataView, at: number, dv: DataView, pos: number, len: number): void {
  fixed("a timestamp", 8, len);
  const hi = dv.getInt32(pos);
  if (hi >= -0x10_0000 && hi < 0x10_0000) {
    const us = hi * TWO_32 + dv.getUint32(pos + 4) + EPOCH_US;
    out.setInt32(at, us | 0, true);
    out.setInt32(at + 4, Math.floor(us / TWO_32), true);
  } else {
    out.setBigInt64(at, timestamp(dv, pos, len), true);
  }
}

class FixedBuilder extends BuiltColumn implements ColumnBuilder {
  private readonly write: FixedWrite;

  constructor(
    pair: string,
    private readonly width: number,
    nullable: boolean,
  ) {
    super(nullable);
    this.write = FIXED[pair]!;
  }

  value(_buf: Buffer, dv: DataView, pos: number, len: number): void {
    const at = this.n * this.width;
    this.data.ensure(at + this.width);
    this.write(this.data.view, at, dv, pos, len);
    this.n++;
  }

  nullValue(): void {
    const at = this.n * this.width;
    this.data.ensure(at + this.width);
    // The encoder leaves a NULL's slot as the zeroed message buffer has it.
    this.data.bytes.fill(0, at, at + this.width);
    this.nulls.rows.push(this.n++);
  }

  plan(): ColumnPlan {
    return this.flatBatch(this.n * this.width);
  }
}

class BoolBuilder extends BuiltColumn implements ColumnBuilder {
  value(buf: Buffer, _dv: DataView, pos: number, len: number): void {
    fixed("bool", 1, len);
    const byte = this.n >> 3;
    this.data.ensure(byte + 1);
    if ((this.n & 7) === 0) this.data.bytes[byte] = 0;
    if (buf[pos] !== 0) this.data.bytes[byte]! |= 1 << (this.n & 7);
    this.n++;
  }

  nullValue(): void {
    const byte = this.n >> 3;
    this.data.ensure(byte + 1);
    if ((this.n & 7) === 0) this.data.bytes[byte] = 0;
    this.nulls.rows.push(this.n++);
  }

  plan(): ColumnPlan {
    return this.flatBatch((this.n + 7) >> 3);
  }
}

/** Values this long or longer are copied and checked natively; shorter ones byte by byte. */
const NATIVE_COPY = 64;

class Utf8Builder extends BuiltUtf8Column implements ColumnBuilder {
  /** UTF-8 checked as decode-values.ts `text` checks it: text that is not valid UTF-8 is refused. */
  value(buf: Buffer, _dv: DataView, pos: number, len: number): void {
    const at = this.end;
    this.data.ensure(at + len);
    const out = this.data.bytes;
    if (len >= NATIVE_COPY) {
      const bytes = buf.subarray(pos, pos + len);
      if (!isUtf8(bytes)) throw new Refusal("text that is not valid UTF-8");
      out.set(bytes, at);
    } else {
      let high = 0;
      for (let i = 0; i < len; i++) {
        const byte = buf[pos + i]!;
        high |= byte;
        out[at + i] = byte;
      }
      if (high >= 0x80 && !isUtf8(buf.subarray(pos, pos + len))) throw new Refusal("text that is not valid UTF-8");
    }
    this.end = at + len;
    this.push();
  }

  nullValue(): void {
    this.nulls.rows.push(this.n);
    this.push();
  }

  private push(): void {
    this.offsetsFor(this.n + 1);
    this.offsets[++this.n] = this.end;
  }

  plan(): ColumnPlan {
    return this.utf8Batch();
  }
}
