/**
 * A PostgreSQL column as the dialect sees it (DESIGN.md §14): the SQLite column it stands for, with
 * the same Arrow type (bigint ↔ INTEGER, double precision ↔ REAL, text ↔ TEXT, boolean ↔ BOOLEAN
 * holding 0/1, date ↔ DATE holding 'YYYY-MM-DD', timestamptz ↔ DATETIME holding its UTC text,
 * bytea ↔ BLOB, numeric ↔ NUMERIC), so that SQLite's rules (storage classes, affinities) say what
 * a query means on it. Types with no such counterpart may be selected but not used in WHERE or
 * ORDER BY.
 */
import { quoteIdentifier } from "./literals.ts";

/** The storage class SQLite would hold a value of the column in, or the value's own kind (date/timestamps: text in SQLite). */
export type ColumnClass = "int" | "real" | "numeric" | "text" | "bool" | "blob" | "date" | "timestamptz" | "timestamp";

/** SQLite's column affinity (https://sqlite.org/datatype3.html §3.1), which decides comparisons. */
export type Affinity = "integer" | "real" | "numeric" | "text" | "blob" | "none";

export interface PostgresColumn {
  name: string;
  /** The type as given (format_type(), e.g. "numeric(10,2)"); for messages. */
  sourceType: string;
  /** null: no SQLite counterpart; the column can be selected, not filtered or sorted on. */
  class: ColumnClass | null;
  affinity: Affinity;
  /** The value as an expression of the class's PostgreSQL type (int8 or narrower, float8, text, …). */
  sql: string;
  /** An int4 or int2 column: arithmetic on it is widened to int8 first, as SQLite computes in 64 bits. */
  narrow: boolean;
}

const CLASSES: Record<string, { class: ColumnClass; cast?: string; narrow?: true }> = {
  bigint: { class: "int" },
  int8: { class: "int" },
  integer: { class: "int", narrow: true },
  int: { class: "int", narrow: true },
  int4: { class: "int", narrow: true },
  smallint: { class: "int", narrow: true },
  int2: { class: "int", narrow: true },
  "double precision": { class: "real" },
  float8: { class: "real" },
  // A float4 value widens to float8 exactly: SQLite holds that double.
  real: { class: "real", cast: "float8" },
  float4: { class: "real", cast: "float8" },
  numeric: { class: "numeric" },
  decimal: { class: "numeric" },
  text: { class: "text" },
  "character varying": { class: "text" },
  varchar: { class: "text" },
  // Read as their text (DESIGN.md §14: uuid's canonical text, json's text).
  uuid: { class: "text", cast: "text" },
  json: { class: "text", cast: "text" },
  jsonb: { class: "text", cast: "text" },
  boolean: { class: "bool" },
  bool: { class: "bool" },
  bytea: { class: "blob" },
  date: { class: "date" },
  "timestamp with time zone": { class: "timestamptz" },
  timestamptz: { class: "timestamptz" },
  "timestamp without time zone": { class: "timestamp" },
  timestamp: { class: "timestamp" },
};

export const AFFINITY: Record<ColumnClass, Affinity> = {
  int: "integer",
  real: "real",
  numeric: "numeric",
  text: "text",
  // BOOLEAN, DATE, DATETIME: NUMERIC affinity in SQLite.
  bool: "numeric",
  date: "numeric",
  timestamptz: "numeric",
  timestamp: "numeric",
  blob: "blob",
};

/** `character(n)` pads and compares ignoring trailing spaces; arrays, ranges, geometry…: no counterpart. */
export function postgresColumn(name: string, sourceType: string): PostgresColumn {
  const normalized = sourceType.trim().toLowerCase().replace(/\s+/g, " ").replace(/\s*\(.*\)\s*/, " ").trim();
  // "timestamp(3) with time zone" loses its precision in the middle.
  const key = normalized.replace(/ +/g, " ");
  const known = key.endsWith("[]") ? undefined : Object.hasOwn(CLASSES, key) ? CLASSES[key] : undefined;
  const identifier = quoteIdentifier(name);
  if (known === undefined) return { name, sourceType, class: null, affinity: "none", sql: identifier, narrow: false };
  return {
    name,
    sourceType,
    class: known.class,
    affinity: AFFINITY[known.class],
    sql: known.cast === undefined ? identifier : `(${identifier})::${known.cast}`,
    narrow: known.narrow === true,
  };
}
