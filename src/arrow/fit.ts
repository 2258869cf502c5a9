/**
 * Whether a SQLite value fits its column's Arrow type, and what it becomes (ARCHITECTURE.md §5).
 * SQLite is dynamically typed, so any column can hold any value; a value that cannot be
 * represented exactly is never changed silently: it is a misfit with a detail naming the value.
 *
 * Values arrive as bun:sqlite returns them. With `safeIntegers: true` (the default here, and how
 * arrow402 opens its connections) every INTEGER is a bigint and every REAL a number, so both the
 * storage class and the exact value are known. With `safeIntegers: false` an integral number may be
 * an INTEGER that SQLite rounded to 53 bits on the way out; such values beyond 2^53 are misfits.
 */
import { hasSubMillisecondPrecision, parseIsoDate, parseIsoTimestamp } from "./datetime.ts";
import { sqliteIntegerText, sqliteRealText } from "./sqlite-text.ts";
import { DECIMAL128_MAX_PRECISION, type ArrowKind, type ColumnType, type StructField } from "./types.ts";

export interface FitOptions {
  /** The rows come from a bun:sqlite connection with `safeIntegers: true` (default true). */
  safeIntegers?: boolean;
  /** False for a NOT NULL column: a NULL there is a misfit (default true). */
  nullable?: boolean;
}

/** Why a value does not fit, e.g. "text 'abc' is not an integer". */
export class Misfit {
  constructor(readonly detail: string) {}
}

/**
 * What a non-null value becomes: int64/timestamp → number (safe integer) or bigint, date32 → days,
 * int16/int32 → number, decimal128 and the µs timestamps → bigint, list → an array of its elements'
 * values (null for a NULL element), struct → an object of its members' values (null for a NULL member).
 */
export type ArrowValue = number | bigint | string | boolean | Uint8Array | readonly (ArrowValue | null)[] | StructValue;

/** A struct's value: a property per member, in the type's order. */
export interface StructValue {
  readonly [member: string]: ArrowValue | null;
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
const TWO_POW_63 = 2 ** 63;

/**
 * null = fits; else a detail such as "text 'abc' is not an integer". A kind alone is enough for
 * the kinds that need nothing beside it (all but decimal128 and list).
 */
export function fitProblem(type: ArrowKind | ColumnType, value: unknown, options: FitOptions = {}): string | null {
  if (value === null) return options.nullable === false ? "NULL in a column declared NOT NULL" : null;
  const converted = convertValue(type, value, options.safeIntegers ?? true);
  return converted instanceof Misfit ? converted.detail : null;
}

/** The Arrow value of a non-null value, or why it does not fit. */
export function convertValue(type: ArrowKind | ColumnType, value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  const kind = typeof type === "string" ? type : type.kind;
  if (kind !== "float64" && kind !== "float32" && !safeIntegers && typeof value === "number" && isUnsafeInteger(value)) {
    // A REAL column holds REALs only, so there the number is exact; elsewhere it may not be.
    return new Misfit(`integer ${value} beyond 2^53 may have been rounded (read it with safeIntegers)`);
  }
  switch (kind) {
    case "int64":
      return toInt64(value, safeIntegers);
    case "float64":
      return toFloat64(value, safeIntegers);
    case "utf8":
      return toText(value, safeIntegers);
    case "binary":
      return value instanceof Uint8Array ? value : new Misfit(`${describe(value, safeIntegers)} is not a blob`);
    case "bool":
      return toBool(value, safeIntegers);
    case "date32":
      return toDate(value, safeIntegers);
    case "timestamp":
      return toTimestamp(value, safeIntegers);
    case "int16":
      return toSmallInteger(value, safeIntegers, 16);
    case "int32":
      return toSmallInteger(value, safeIntegers, 32);
    case "float32":
      return toFloat32(value, safeIntegers);
    case "decimal128":
      return toDecimal(value, safeIntegers, typeof type === "string" ? {} : type);
    case "timestamp_us":
    case "timestamp_us_utc":
      return toMicroseconds(value, safeIntegers);
    case "list":
      return toList(value, safeIntegers, typeof type === "string" ? undefined : type.child);
    case "struct":
      return toStruct(value, safeIntegers, typeof type === "string" ? undefined : type.fields);
  }
}

function isUnsafeInteger(value: number): boolean {
  return Number.isInteger(value) && !Number.isSafeInteger(value);
}

function toInt64(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "bigint") {
    return value >= INT64_MIN && value <= INT64_MAX ? value : new Misfit(`integer ${value} is outside the 64-bit range`);
  }
  if (typeof value === "number" && Number.isInteger(value)) {
    if (Number.isSafeInteger(value)) return value;
    // An integral REAL (safeIntegers) is exact; convert it unless it lies outside int64.
    if (value >= -TWO_POW_63 && value < TWO_POW_63) return BigInt(value);
    return new Misfit(`${describe(value, safeIntegers)} is outside the 64-bit integer range`);
  }
  return new Misfit(`${describe(value, safeIntegers)} is not an integer`);
}

function toFloat64(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") {
    const float = Number(value);
    return BigInt(float) === value ? float : new Misfit(`integer ${value} cannot be represented exactly as a 64-bit float`);
  }
  return new Misfit(`${describe(value, safeIntegers)} is not a number`);
}

function toText(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "string") return value;
  if (typeof value === "bigint") return sqliteIntegerText(value);
  if (typeof value === "number") {
    // Without safeIntegers an integral number is taken for an INTEGER: "2", not the REAL's "2.0".
    if (!safeIntegers && Number.isInteger(value)) return sqliteIntegerText(value);
    return sqliteRealText(value) ?? new Misfit(`real ${value} has no SQLite text form`);
  }
  return new Misfit(`${describe(value, safeIntegers)} is not text`);
}

function toBool(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "boolean") return value;
  if (value === 0 || value === 0n) return false;
  if (value === 1 || value === 1n) return true;
  return new Misfit(`${describe(value, safeIntegers)} is not a boolean (0 or 1)`);
}

/**
 * ISO text (SQLite), or a number of days since 1970-01-01 (the other engines). Numbers only with
 * safeIntegers: then a number is never a SQLite INTEGER, and a SQLite DATE column (NUMERIC affinity)
 * stores every integral REAL as an INTEGER, so no SQLite value is read as days (SQLite's own date
 * functions would read a number as a Julian day).
 */
function toDate(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "string") {
    const days = parseIsoDate(value);
    if (days === days) return days;
  }
  if (safeIntegers && typeof value === "number" && (value | 0) === value) return value;
  return new Misfit(`${describe(value, safeIntegers)} is not an ISO-8601 date (YYYY-MM-DD)`);
}

const SMALL_INTEGER_RANGE = { 16: [-32_768, 32_767], 32: [-2_147_483_648, 2_147_483_647] } as const;

/** int16, int32: a number, or a bigint, within the range; never rounded nor wrapped. */
function toSmallInteger(value: unknown, safeIntegers: boolean, bits: 16 | 32): ArrowValue | Misfit {
  const [min, max] = SMALL_INTEGER_RANGE[bits];
  if (typeof value === "number" && Number.isInteger(value)) {
    return value >= min && value <= max ? value + 0 : new Misfit(`${describeValue(value, safeIntegers)} is outside the ${bits}-bit integer range`);
  }
  if (typeof value === "bigint") {
    return value >= BigInt(min) && value <= BigInt(max) ? Number(value) : new Misfit(`integer ${value} is outside the ${bits}-bit integer range`);
  }
  return new Misfit(`${describeValue(value, safeIntegers)} is not an integer`);
}

/**
 * float32: a number that is a 32-bit float exactly (NaN and the infinities included). A double that
 * is not would be rounded by the store: an engine reading text parses it to the float it was
 * (Math.fround), and anything else does not fit.
 */
function toFloat32(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "number") {
    return Math.fround(value) === value || value !== value ? value : new Misfit(`${describeValue(value, safeIntegers)} is not exactly a 32-bit float`);
  }
  if (typeof value === "bigint") {
    const float = Math.fround(Number(value));
    return Number.isFinite(float) && BigInt(float) === value ? float : new Misfit(`integer ${value} cannot be represented exactly as a 32-bit float`);
  }
  return new Misfit(`${describeValue(value, safeIntegers)} is not a number`);
}

/** 10^p - 1 for each precision: the largest unscaled value of decimal(p, s). */
export const DECIMAL_LIMITS: readonly bigint[] = Array.from({ length: DECIMAL128_MAX_PRECISION + 1 }, (_, p) => 10n ** BigInt(p) - 1n);

/** decimal128: the unscaled value as a bigint, of at most `precision` digits. */
function toDecimal(value: unknown, safeIntegers: boolean, { precision = 38, scale = 0 }: { precision?: number; scale?: number }): ArrowValue | Misfit {
  if (typeof value !== "bigint") return new Misfit(`${describeValue(value, safeIntegers)} is not a decimal's unscaled value (a bigint)`);
  const limit = DECIMAL_LIMITS[precision] ?? 10n ** BigInt(precision) - 1n;
  if (value > limit || value < -limit) return new Misfit(`unscaled value ${value} has more than ${precision} digits: it does not fit decimal(${precision},${scale})`);
  return value;
}

/** timestamp_us, timestamp_us_utc: microseconds since the epoch, a bigint within int64. */
function toMicroseconds(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "bigint") return value >= INT64_MIN && value <= INT64_MAX ? value : new Misfit(`integer ${value} is outside the 64-bit range`);
  return new Misfit(`${describeValue(value, safeIntegers)} is not a timestamp in microseconds (a bigint)`);
}

/** list: a JS array whose elements each fit the child type or are null; the first misfit names its element. */
function toList(value: unknown, safeIntegers: boolean, child: ColumnType | undefined): ArrowValue | Misfit {
  if (!Array.isArray(value)) return new Misfit(`${describeValue(value, safeIntegers)} is not a list`);
  if (child === undefined) throw new TypeError("a list column needs the type of its elements (child)");
  const elements: (ArrowValue | null)[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const element: unknown = value[i];
    if (element === null) {
      elements[i] = null;
      continue;
    }
    const converted = convertValue(child, element, safeIntegers);
    if (converted instanceof Misfit) return new Misfit(`list element ${i}: ${converted.detail}`);
    elements[i] = converted;
  }
  return elements;
}

/**
 * struct: a plain object with a property for every member (null for a NULL member), each fitting
 * the member's type; the first misfit names its member. Other properties are not read.
 */
function toStruct(value: unknown, safeIntegers: boolean, fields: readonly StructField[] | undefined): ArrowValue | Misfit {
  if (!isStructObject(value)) return new Misfit(`${describeValue(value, safeIntegers)} is not a struct`);
  if (fields === undefined) throw new TypeError("a struct column needs its members (fields)");
  const members: Record<string, ArrowValue | null> = {};
  for (const field of fields) {
    const member = Object.hasOwn(value, field.name) ? (value as Record<string, unknown>)[field.name] : undefined;
    if (member === undefined) return new Misfit(`struct member '${field.name}': missing`);
    const converted = member === null ? null : convertValue(field.type, member, safeIntegers);
    if (converted instanceof Misfit) return new Misfit(`struct member '${field.name}': ${converted.detail}`);
    // defineProperty: a member named __proto__ is a property like any other.
    Object.defineProperty(members, field.name, { value: converted, enumerable: true, writable: true, configurable: true });
  }
  return members;
}

/** An object that can be a struct's value: not a list, a blob, a Date nor any other class's instance. */
export function isStructObject(value: unknown): value is object {
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function toTimestamp(value: unknown, safeIntegers: boolean): ArrowValue | Misfit {
  if (typeof value === "string") {
    const ms = parseIsoTimestamp(value);
    if (ms === ms) return ms;
    const why = hasSubMillisecondPrecision(value) ? "has sub-millisecond precision" : "is not an ISO-8601 timestamp";
    return new Misfit(`${describe(value, safeIntegers)} ${why}`);
  }
  // Unix seconds.
  if (typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value))) {
    const seconds = value;
    if (typeof seconds === "number" && Number.isSafeInteger(seconds * 1000)) return seconds * 1000;
    const ms = BigInt(seconds) * 1000n;
    if (ms >= INT64_MIN && ms <= INT64_MAX) return ms;
    return new Misfit(`${describe(value, safeIntegers)} Unix seconds is outside the timestamp range`);
  }
  if (typeof value === "number" && Number.isFinite(value)) {
    const ms = Math.round(value * 1000);
    if (ms / 1000 === value && Number.isSafeInteger(ms)) return ms;
    return new Misfit(`${describe(value, safeIntegers)} Unix seconds is not a whole number of milliseconds`);
  }
  return new Misfit(`${describe(value, safeIntegers)} is not a timestamp (ISO-8601 text or Unix seconds)`);
}

/** How a value is named in a detail: its SQLite storage class and a short rendering. */
export function describe(value: unknown, safeIntegers = true): string {
  if (value === null) return "NULL";
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `text '${shown}'`;
  }
  if (typeof value === "bigint") return `integer ${value}`;
  if (typeof value === "number") {
    return !safeIntegers && Number.isInteger(value) ? `integer ${value}` : `real ${value}`;
  }
  if (value instanceof Uint8Array) return `blob of ${value.byteLength} byte${value.byteLength === 1 ? "" : "s"}`;
  if (typeof value === "boolean") return `boolean ${value}`;
  if (value === undefined) return "a missing value";
  return `a ${typeof value} that is not a SQLite value`;
}

/**
 * How a value is named for the other engines' kinds, whose values are JavaScript values rather than
 * SQLite storage classes: a number is a number (not a REAL), and a list, a Date or an object is
 * named as such.
 */
function describeValue(value: unknown, safeIntegers: boolean): string {
  if (typeof value === "number") return `number ${value}`;
  if (Array.isArray(value)) return `a list of ${value.length} value${value.length === 1 ? "" : "s"}`;
  if (value instanceof Date) return "a Date";
  if (typeof value === "object" && value !== null && !(value instanceof Uint8Array)) return "an object";
  return describe(value, safeIntegers);
}
