/**
 * One value of an Arrow column as text and as JSON, exactly (ARCHITECTURE.md §5 types): Int64 is a
 * bigint and printed with all its digits, timestamps are ISO-8601 UTC, dates ISO `YYYY-MM-DD`,
 * binary is lowercase hex, and null is null — empty in text, `null` in JSON.
 */
import { DataType } from "apache-arrow";

export type CellKind = "int" | "float" | "bool" | "text" | "binary" | "date" | "timestamp" | "other";

export function cellKind(type: DataType): CellKind {
  if (DataType.isInt(type) || DataType.isDecimal(type)) return "int";
  if (DataType.isFloat(type)) return "float";
  if (DataType.isBool(type)) return "bool";
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type) || DataType.isUtf8View(type)) return "text";
  if (DataType.isBinary(type) || DataType.isLargeBinary(type) || DataType.isFixedSizeBinary(type) || DataType.isBinaryView(type)) return "binary";
  if (DataType.isDate(type)) return "date";
  if (DataType.isTimestamp(type)) return "timestamp";
  return "other";
}

/** Text of a value (CSV, table); null for a null value. */
export function cellText(kind: CellKind, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case "binary":
      return value instanceof Uint8Array ? Buffer.from(value).toString("hex") : String(value);
    case "date":
      return isoFromMillis(value, true);
    case "timestamp":
      return isoFromMillis(value, false);
    case "other":
      return typeof value === "object" ? jsonOf(value) : String(value);
    default:
      return String(value);
  }
}

/** JSON text of a value: numbers stay numbers with every digit, non-finite floats become strings. */
export function cellJson(kind: CellKind, value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (kind) {
    case "int":
      return String(value);
    case "float":
      return typeof value === "number" && Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
    case "bool":
      return value ? "true" : "false";
    case "other":
      return jsonOf(value);
    default:
      return JSON.stringify(cellText(kind, value));
  }
}

/** apache-arrow reads dates and timestamps (of any unit) as epoch milliseconds. */
function isoFromMillis(value: unknown, dateOnly: boolean): string {
  const millis = typeof value === "bigint" ? Number(value) : value instanceof Date ? value.getTime() : Number(value);
  const date = new Date(millis);
  if (Number.isNaN(date.getTime())) return String(value);
  const iso = date.toISOString();
  return dateOnly ? iso.slice(0, iso.indexOf("T")) : iso;
}

function jsonOf(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    typeof inner === "bigint" ? inner.toString() : inner instanceof Uint8Array ? Buffer.from(inner).toString("hex") : inner,
  );
}
