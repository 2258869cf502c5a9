/**
 * The text of a non-null value in the text formats (CSV, JSON, NDJSON), per Arrow kind. Each value
 * is first what the Arrow encoder makes of it (arrow/fit.ts `convertValue`, the single authority on
 * what fits), then written as text, so the text formats carry the same values as the Arrow stream:
 *
 * | kind      | text                                                      |
 * |-----------|-----------------------------------------------------------|
 * | int64     | exact decimal digits (`-9223372036854775808`)             |
 * | float64   | shortest text that reads back to the same double; `-0`, `Infinity`, `-Infinity` |
 * | utf8      | the text                                                  |
 * | binary    | base64 (RFC 4648, with padding)                           |
 * | bool      | `true` / `false`                                          |
 * | date32    | `YYYY-MM-DD`                                              |
 * | timestamp | `YYYY-MM-DDTHH:MM:SS.sssZ` (UTC, milliseconds)            |
 * | int16, int32 | decimal digits                                         |
 * | float32   | shortest text that reads back to the same 32-bit float (`3.14`, as PostgreSQL and DuckDB print it) |
 * | decimal128 | exact digits at the column's scale (`12.3400`, `-0.0050`) |
 * | timestamp_us | `YYYY-MM-DDTHH:MM:SS.ffffff` (a wall-clock time: no zone) |
 * | timestamp_us_utc | `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds)   |
 * | list      | the JSON array of its elements, each as the JSON format writes it (`[1,null,"2024-01-01"]`) |
 * | struct    | the JSON object of its members, in the type's order, each as the JSON format writes it (`{"a":1,"b":null}`) |
 *
 * Common values take a fast path that agrees with `convertValue`; anything else goes through it.
 */
import { convertValue, INT64_MAX, INT64_MIN, Misfit, type ArrowValue, type StructValue } from "../arrow/fit.ts";
import { parseIsoTimestamp } from "../arrow/datetime.ts";
import type { ArrowKind, ColumnType } from "../arrow/types.ts";
import { decimalText } from "./decimal.ts";
import { isoDate, isoMicroseconds, isoTimestamp } from "./iso.ts";

/** The text of one non-null value, or why it does not fit its column. */
export type TextForm = (value: unknown) => string | Misfit;

/** Text forms per kind, for rows read with or without `safeIntegers`; each made for one column's type. */
export function textForms(safeIntegers: boolean): Record<ArrowKind, (type: ColumnType) => TextForm> {
  const converted =
    (type: ArrowKind | ColumnType, write: (value: ArrowValue) => string): TextForm =>
    (value) => {
      const result = convertValue(type, value, safeIntegers);
      return result instanceof Misfit ? result : write(result);
    };
  return {
    int64: () => {
      const slow = converted("int64", String);
      return (value) => (typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX ? value.toString() : slow(value));
    },
    float64: () => {
      const slow = converted("float64", (x) => floatText(x as number));
      return (value) => (typeof value === "number" ? floatText(value) : slow(value));
    },
    utf8: () => {
      const slow = converted("utf8", (text) => text as string);
      return (value) => (typeof value === "string" ? value : slow(value));
    },
    binary: () => converted("binary", (blob) => base64(blob as Uint8Array)),
    bool: () => converted("bool", (truth) => (truth ? "true" : "false")),
    date32: () => {
      // Dates repeat from row to row in most tables: reuse the last text.
      let lastDays = NaN;
      let lastText = "";
      return converted("date32", (days) => {
        if (days !== lastDays) {
          lastDays = days as number;
          lastText = isoDate(lastDays);
        }
        return lastText;
      });
    },
    timestamp: () => {
      const slow = converted("timestamp", (ms) => isoTimestamp(ms as number | bigint));
      return (value) => {
        if (typeof value === "string") {
          const ms = parseIsoTimestamp(value);
          // The commonest stored form, 'YYYY-MM-DD HH:MM:SS' (the only valid one of 19
          // characters): UTC already, rearranged rather than formatted again.
          if (ms === ms) return value.length === 19 ? `${value.slice(0, 10)}T${value.slice(11)}.000Z` : isoTimestamp(ms);
        }
        return slow(value);
      };
    },
    int16: () => {
      const slow = converted("int16", String);
      return (value) => (typeof value === "number" && (value << 16) >> 16 === value ? String(value) : slow(value));
    },
    int32: () => {
      const slow = converted("int32", String);
      return (value) => (typeof value === "number" && (value | 0) === value ? String(value) : slow(value));
    },
    float32: () => {
      const slow = converted("float32", (x) => float32Text(x as number));
      return (value) => (typeof value === "number" && Math.fround(value) === value ? float32Text(value) : slow(value));
    },
    decimal128: (type) => converted(type, (unscaled) => decimalText(unscaled as bigint, type.scale!)),
    timestamp_us: (type) => converted(type, (micros) => isoMicroseconds(micros as bigint, false)),
    timestamp_us_utc: (type) => converted(type, (micros) => isoMicroseconds(micros as bigint, true)),
    list: (type) => converted(type, (elements) => jsonValueText(type, elements)),
    struct: (type) => converted(type, (members) => jsonValueText(type, members)),
  };
}

/**
 * The JSON text of a value `convertValue` made (DESIGN §16): the JSON format's text of each kind,
 * written here for the elements of lists and the members of structs, which the text formats write
 * as JSON arrays and objects. int64 is a
 * number while it is a safe integer and a string of its digits beyond, a decimal always a string;
 * dates, timestamps and blobs are strings; floats numbers, ±Infinity `1e999` / `-1e999`.
 */
export function jsonValueText(type: ColumnType, value: ArrowValue): string {
  switch (type.kind) {
    case "int64": {
      const digits = String(value);
      return safeIntegerText(digits) ? digits : `"${digits}"`;
    }
    case "int16":
    case "int32":
      return String(value);
    case "float64":
      return jsonFloat(floatText(value as number));
    case "float32":
      return jsonFloat(float32Text(value as number));
    case "bool":
      return value ? "true" : "false";
    case "utf8":
      return JSON.stringify(value);
    case "binary":
      return `"${base64(value as Uint8Array)}"`;
    case "date32":
      return `"${isoDate(value as number)}"`;
    case "timestamp":
      return `"${isoTimestamp(value as number | bigint)}"`;
    case "timestamp_us":
    case "timestamp_us_utc":
      return `"${isoMicroseconds(value as bigint, type.kind === "timestamp_us_utc")}"`;
    case "decimal128":
      return `"${decimalText(value as bigint, type.scale!)}"`;
    case "list": {
      const elements = value as readonly (ArrowValue | null)[];
      let text = "[";
      for (let i = 0; i < elements.length; i++) {
        const element = elements[i]!;
        text += (i === 0 ? "" : ",") + (element === null ? "null" : jsonValueText(type.child!, element));
      }
      return `${text}]`;
    }
    case "struct": {
      const members = value as StructValue;
      let text = "{";
      type.fields!.forEach((field, i) => {
        const member = members[field.name] ?? null;
        text += `${i === 0 ? "" : ","}${JSON.stringify(field.name)}:${member === null ? "null" : jsonValueText(field.type, member)}`;
      });
      return `${text}}`;
    }
  }
}

/**
 * Whether an integer's digits are a safe integer, the numbers every JSON reader reads exactly. Up to
 * 15 digits always are and 17 or more never are, decided by the length alone; 2^53 - 1 has 16.
 */
export function safeIntegerText(text: string): boolean {
  return text.length < 16 || (text.length <= 17 && Number.isSafeInteger(Number(text)));
}

/** A float's text as a JSON number: JSON has no literal for the infinities, nor for NaN (formats/json.ts). */
export function jsonFloat(text: string): string {
  if (text === "Infinity") return "1e999";
  if (text === "-Infinity") return "-1e999";
  return text === "NaN" ? "null" : text;
}

/**
 * JavaScript's number-to-text is the shortest text that reads back to the same double. It drops
 * the sign of zero, which the Arrow stream keeps: `-0` is written as such.
 */
export function floatText(x: number): string {
  return x === 0 && 1 / x < 0 ? "-0" : String(x);
}

/**
 * A 32-bit float's shortest text: the fewest significant digits that read back, as a 32-bit float,
 * to the same value (`3.14` for the float nearest 3.14, whose double is 3.140000104904175). Nine
 * digits always do.
 */
export function float32Text(x: number): string {
  if (x === 0 || !Number.isFinite(x)) return floatText(x);
  for (let digits = 1; digits < 9; digits++) {
    const shorter = Number(x.toPrecision(digits));
    if (Math.fround(shorter) === x) return String(shorter);
  }
  return String(Number(x.toPrecision(9)));
}

export function base64(blob: Uint8Array): string {
  return Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64");
}
