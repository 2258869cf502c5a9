/**
 * SQLite declared type → Arrow type (ARCHITECTURE.md §5). The Arrow type of a column depends only on
 * its declared type, following SQLite's affinity rules, so a schema is known before any row is read.
 */
import { Binary, Bool, DateDay, Float64, Int64, TimeUnit, Timestamp, Utf8, type DataType } from "apache-arrow";

export type ArrowKind = "int64" | "utf8" | "binary" | "float64" | "bool" | "date32" | "timestamp";

/** Ordered as SQLite applies its affinity rules: INT wins over CHAR, CHAR over BLOB, and so on. */
export function arrowKindFor(declaredType: string): ArrowKind {
  const t = declaredType.trim().toUpperCase();
  if (t === "DATE") return "date32";
  if (t.includes("DATETIME") || t.includes("TIMESTAMP")) return "timestamp";
  if (t.includes("INT")) return "int64";
  if (t.includes("CHAR") || t.includes("CLOB") || t.includes("TEXT")) return "utf8";
  if (t.includes("BLOB")) return "binary";
  if (t.includes("REAL") || t.includes("FLOA") || t.includes("DOUB")) return "float64";
  if (t.includes("BOOL")) return "bool";
  return "utf8";
}

export function arrowTypeFor(kind: ArrowKind): DataType {
  switch (kind) {
    case "int64":
      return new Int64();
    case "utf8":
      return new Utf8();
    case "binary":
      return new Binary();
    case "float64":
      return new Float64();
    case "bool":
      return new Bool();
    case "date32":
      return new DateDay();
    case "timestamp":
      return new Timestamp(TimeUnit.MILLISECOND, "UTC");
  }
}
