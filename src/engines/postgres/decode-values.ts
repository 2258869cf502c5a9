/**
 * One binary COPY value → the JS value COLUMN-TYPES.md hands to the encoders, exactly (PostgreSQL's
 * *send functions; every number is big-endian on the wire):
 * - int2/int4 → number; int8 → bigint read from its 8 bytes (never through a double);
 * - float4/float8 → number (NaN and ±Infinity are floats Arrow holds);
 * - numeric → the unscaled bigint of its Decimal128, or its exact text (numeric.ts);
 * - date → days since 1970 (PostgreSQL counts from 2000-01-01);
 * - timestamp/timestamptz → bigint µs since 1970-01-01T00:00:00Z (PostgreSQL: µs since 2000, UTC);
 * - text, json, ::text → string; jsonb → string after its version byte; uuid → 8-4-4-4-12 lower case;
 * - bytea → Uint8Array; a one-dimensional array starting at 1 → a JS array (elements may be null).
 * What the column's type cannot hold throws `Refusal`; bytes that are not the expected form throw
 * `WireMismatch` (the column's type changed after it was read from the catalog).
 */
import { numericText, numericUnscaled } from "./numeric.ts";
import { Refusal } from "./value-refusal.ts";
import type { ColumnType, PgWire } from "./types.ts";

/**
 * Decodes the `len` bytes at `pos` of `buf` (`dv` views the same bytes). `owned`: `buf` holds
 * exactly this value and nobody else keeps it, so a bytea can be handed over without a copy.
 */
export type ValueDecoder = (buf: Buffer, dv: DataView, pos: number, len: number, owned: boolean) => unknown;

/** The bytes are not the column's binary form (the decoder names the column). */
export class WireMismatch extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = "WireMismatch";
  }
}

/** 2000-01-01 − 1970-01-01. */
const EPOCH_DAYS = 10_957;
const EPOCH_US = 946_684_800_000_000;
const EPOCH_US_BIG = BigInt(EPOCH_US);
const INT64_MAX = 0x7fff_ffff_ffff_ffffn;
const INT64_MIN = -0x8000_0000_0000_0000n;
/** The largest PostgreSQL timestamp that is still an int64 of µs since 1970 (about 294247 AD). */
const LAST_US = INT64_MAX - EPOCH_US_BIG;
const INT32_MAX = 0x7fff_ffff;
const INT32_MIN = -0x8000_0000;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function fixed(name: string, expected: number, len: number): void {
  if (len !== expected) throw new WireMismatch(`a ${len}-byte value where ${name} has ${expected} bytes`);
}

/**
 * UTF-8 text, refused when it is not valid UTF-8 (a database whose encoding is SQL_ASCII sends its
 * bytes unchecked). Buffer's decoder is about twice as fast as a fatal TextDecoder on short values
 * but replaces what it cannot read with U+FFFD; only text holding U+FFFD is decoded again, strictly.
 */
function text(buf: Buffer, pos: number, len: number): string {
  const decoded = buf.toString("utf8", pos, pos + len);
  if (!decoded.includes("\uFFFD")) return decoded;
  try {
    return utf8.decode(buf.subarray(pos, pos + len));
  } catch {
    throw new Refusal("text that is not valid UTF-8");
  }
}

export function timestamp(dv: DataView, pos: number, len: number): bigint {
  fixed("a timestamp", 8, len);
  const hi = dv.getInt32(pos);
  // Within ±2^52 µs of 2000 (±142 years) the shifted value is exact in a double: one bigint made.
  if (hi >= -0x10_0000 && hi < 0x10_0000) return BigInt(hi * 4_294_967_296 + dv.getUint32(pos + 4) + EPOCH_US);
  const us = dv.getBigInt64(pos);
  if (us === INT64_MAX) throw new Refusal("timestamp 'infinity' is no point in time a timestamp column holds");
  if (us === INT64_MIN) throw new Refusal("timestamp '-infinity' is no point in time a timestamp column holds");
  if (us > LAST_US) throw new Refusal("a timestamp after 294247-01-10, beyond int64 microseconds since 1970");
  return us + EPOCH_US_BIG;
}

function date(dv: DataView, pos: number, len: number): number {
  fixed("a date", 4, len);
  const days = dv.getInt32(pos);
  if (days === INT32_MAX) throw new Refusal("date 'infinity' is no day a date column holds");
  if (days === INT32_MIN) throw new Refusal("date '-infinity' is no day a date column holds");
  return days + EPOCH_DAYS;
}

function uuid(buf: Buffer, pos: number, len: number): string {
  fixed("a uuid", 16, len);
  let s = "";
  for (let i = 0; i < 16; i++) {
    s += HEX[buf[pos + i]!];
    if (i === 3 || i === 5 || i === 7 || i === 9) s += "-";
  }
  return s;
}

/** The decoder of one column (or array element) of `type` sent as `wire`. */
export function valueDecoder(wire: PgWire, type: ColumnType): ValueDecoder {
  if (typeof wire === "object") {
    if (type.child === undefined) throw new Error(`an array wire needs a list type, not ${type.kind}`);
    return arrayDecoder(valueDecoder(wire.array, type.child));
  }
  switch (wire) {
    case "int2":
      return (_b, dv, pos, len) => (fixed("int2", 2, len), dv.getInt16(pos));
    case "int4":
      return (_b, dv, pos, len) => (fixed("int4", 4, len), dv.getInt32(pos));
    case "int8":
      return (_b, dv, pos, len) => (fixed("int8", 8, len), dv.getBigInt64(pos));
    case "float4":
      return (_b, dv, pos, len) => (fixed("float4", 4, len), dv.getFloat32(pos));
    case "float8":
      return (_b, dv, pos, len) => (fixed("float8", 8, len), dv.getFloat64(pos));
    case "bool":
      return (buf, _dv, pos, len) => (fixed("bool", 1, len), buf[pos] !== 0);
    case "numeric":
      if (type.kind === "decimal128") {
        const { precision, scale } = type;
        if (precision === undefined || scale === undefined) throw new Error("a decimal128 column needs its precision and scale");
        return (_b, dv, pos, len) => numericUnscaled(dv, pos, len, precision, scale);
      }
      return (_b, dv, pos, len) => numericText(dv, pos, len);
    case "text":
      return (buf, _dv, pos, len) => text(buf, pos, len);
    case "jsonb":
      return (buf, _dv, pos, len) => {
        // jsonb_send: a version byte (1), then the text jsonb_out prints.
        if (len < 1 || buf[pos] !== 1) throw new WireMismatch(`a jsonb value of format version ${len < 1 ? "(none)" : buf[pos]} (1 expected)`);
        return text(buf, pos + 1, len - 1);
      };
    case "uuid":
      return (buf, _dv, pos, len) => uuid(buf, pos, len);
    case "bytea":
      return (buf, _dv, pos, len, owned) => {
        if (owned && pos === 0 && len === buf.length) return new Uint8Array(buf.buffer, buf.byteOffset, len);
        const bytes = new Uint8Array(len);
        bytes.set(buf.subarray(pos, pos + len));
        return bytes;
      };
    case "date":
      return (_b, dv, pos, len) => date(dv, pos, len);
    case "timestamp":
      return (_b, dv, pos, len) => timestamp(dv, pos, len);
  }
}

/**
 * array_send: int32 ndim, int32 has-nulls, uint32 element OID, (int32 size, int32 lower bound) per
 * dimension, then (int32 length or -1 for NULL, bytes) per element. An empty array has ndim 0.
 */
function arrayDecoder(element: ValueDecoder): ValueDecoder {
  return (buf, dv, pos, len) => {
    if (len < 12) throw new WireMismatch(`an array of ${len} bytes`);
    const ndim = dv.getInt32(pos);
    if (ndim === 0) return [];
    if (ndim < 0 || len < 12 + 8 * ndim) throw new WireMismatch(`an array header declaring ${ndim} dimensions in ${len} bytes`);
    if (ndim > 1) throw new Refusal(`a ${ndim}-dimensional array (a list holds a one-dimensional array)`);
    const size = dv.getInt32(pos + 12);
    const lower = dv.getInt32(pos + 16);
    if (lower !== 1) throw new Refusal(`an array whose first index is ${lower} (a list holds arrays that start at 1)`);
    const end = pos + len;
    const out: unknown[] = new Array(size);
    let p = pos + 20;
    for (let i = 0; i < size; i++) {
      if (p + 4 > end) throw new WireMismatch(`an array cut short at element ${i + 1} of ${size}`);
      const l = dv.getInt32(p);
      p += 4;
      if (l === -1) {
        out[i] = null;
        continue;
      }
      if (l < 0 || p + l > end) throw new WireMismatch(`an array element of ${l} bytes past the array's end`);
      try {
        out[i] = element(buf, dv, p, l, false);
      } catch (error) {
        if (error instanceof Refusal) throw new Refusal(`element ${i + 1} of the array: ${error.detail}`);
        throw error;
      }
      p += l;
    }
    if (p !== end) throw new WireMismatch(`an array with ${end - p} bytes after its last element`);
    return out;
  };
}
