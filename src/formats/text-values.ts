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
 *
 * Common values take a fast path that agrees with `convertValue`; anything else goes through it.
 */
import { convertValue, INT64_MAX, INT64_MIN, Misfit, type ArrowValue } from "../arrow/fit.ts";
import { parseIsoTimestamp } from "../arrow/datetime.ts";
import type { ArrowKind } from "../arrow/types.ts";
import { isoDate, isoTimestamp } from "./iso.ts";

/** The text of one non-null value, or why it does not fit its column. */
export type TextForm = (value: unknown) => string | Misfit;

/** Text forms per kind, for rows read with or without `safeIntegers`. */
export function textForms(safeIntegers: boolean): Record<ArrowKind, () => TextForm> {
  const converted =
    (kind: ArrowKind, write: (value: ArrowValue) => string): TextForm =>
    (value) => {
      const result = convertValue(kind, value, safeIntegers);
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
  };
}

/**
 * JavaScript's number-to-text is the shortest text that reads back to the same double. It drops
 * the sign of zero, which the Arrow stream keeps: `-0` is written as such.
 */
export function floatText(x: number): string {
  return x === 0 && 1 / x < 0 ? "-0" : String(x);
}

export function base64(blob: Uint8Array): string {
  return Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString("base64");
}
