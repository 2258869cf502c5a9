/**
 * DuckDB type → column type (DESIGN.md §14 "Arrow types are the engine's, exactly"), how the
 * select list reads the column, and what the compiler of SQLite's meaning makes of it.
 *
 *   TINYINT/SMALLINT/UTINYINT → int16   INTEGER/USMALLINT → int32   BIGINT/UINTEGER → int64
 *   UBIGINT → decimal128(20,0)   HUGEINT → decimal128(38,0)   DECIMAL(p,s) → decimal128(p,s)
 *   FLOAT → float32   DOUBLE → float64   VARCHAR → utf8   UUID, JSON → utf8 (their text)
 *   BOOLEAN → bool   BLOB → binary   DATE → date32   TIMESTAMP (and _S, _MS, _NS) → timestamp_us
 *   (a TIMESTAMP_NS value with a part finer than a microsecond is refused, not rounded)
 *   TIMESTAMP WITH TIME ZONE → timestamp_us_utc   a LIST (`T[]`) of these → list<…>
 *   STRUCT(a T, …) of these → struct<a: …> (members nest: lists of structs, structs of lists)
 *   anything else (MAP, UNION, INTERVAL, TIME, UHUGEINT, ENUM, …) → utf8 of its text (the
 *   encoders have no map or union type). A list or struct with a member that would need a cast
 *   is read as its text, as a whole.
 */
import type { ArrowKind, ColumnType } from "../../arrow/types.ts";
import { AFFINITY, type ColumnClass, type PostgresColumn } from "../postgres/columns.ts";
import { quoteIdentifier } from "../postgres/literals.ts";

export interface DuckColumnType extends ColumnType {
  kind: Exclude<ArrowKind, "timestamp">;
  child?: DuckColumnType;
  fields?: readonly { name: string; type: DuckColumnType }[];
}

export interface DuckMapped {
  type: DuckColumnType;
  /** How the select list reads it: as it is, cast to TIMESTAMP, or as its text. */
  read: "value" | "timestamp" | "text";
}

const SCALARS: Record<string, DuckMapped> = {
  TINYINT: { type: { kind: "int16" }, read: "value" },
  SMALLINT: { type: { kind: "int16" }, read: "value" },
  UTINYINT: { type: { kind: "int16" }, read: "value" },
  INTEGER: { type: { kind: "int32" }, read: "value" },
  USMALLINT: { type: { kind: "int32" }, read: "value" },
  BIGINT: { type: { kind: "int64" }, read: "value" },
  UINTEGER: { type: { kind: "int64" }, read: "value" },
  UBIGINT: { type: { kind: "decimal128", precision: 20, scale: 0 }, read: "value" },
  HUGEINT: { type: { kind: "decimal128", precision: 38, scale: 0 }, read: "value" },
  FLOAT: { type: { kind: "float32" }, read: "value" },
  DOUBLE: { type: { kind: "float64" }, read: "value" },
  VARCHAR: { type: { kind: "utf8" }, read: "value" },
  UUID: { type: { kind: "utf8" }, read: "text" },
  JSON: { type: { kind: "utf8" }, read: "text" },
  BOOLEAN: { type: { kind: "bool" }, read: "value" },
  BLOB: { type: { kind: "binary" }, read: "value" },
  DATE: { type: { kind: "date32" }, read: "value" },
  TIMESTAMP: { type: { kind: "timestamp_us" }, read: "value" },
  TIMESTAMP_S: { type: { kind: "timestamp_us" }, read: "timestamp" },
  TIMESTAMP_MS: { type: { kind: "timestamp_us" }, read: "timestamp" },
  // Read as nanoseconds (values.ts): whole microseconds fit, a value with a finer part is refused.
  TIMESTAMP_NS: { type: { kind: "timestamp_us" }, read: "value" },
  "TIMESTAMP WITH TIME ZONE": { type: { kind: "timestamp_us_utc" }, read: "value" },
};

const TEXT: DuckMapped = { type: { kind: "utf8" }, read: "text" };

/** The column type of a DuckDB type as information_schema.columns.data_type writes it. */
export function mapDuckType(dataType: string): DuckMapped {
  const type = dataType.trim();
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(type);
  if (decimal !== null) return { type: { kind: "decimal128", precision: Number(decimal[1]), scale: Number(decimal[2]) }, read: "value" };
  if (type.endsWith("[]")) {
    const element = mapDuckType(type.slice(0, -2));
    // A list whose elements would need a cast is read as its text, as a whole.
    return element.read === "value" ? { type: { kind: "list", child: element.type }, read: "value" } : TEXT;
  }
  if (type.startsWith("STRUCT(") && type.endsWith(")")) {
    const members = structMembers(type.slice("STRUCT(".length, -1));
    // @duckdb/node-api gathers a struct's members in a plain object, where a member named __proto__
    // is lost: such a struct is read as its text.
    if (members === null || members.some(({ name }) => name === "__proto__")) return TEXT;
    const fields = members.map(({ name, dataType }) => ({ name, mapped: mapDuckType(dataType) }));
    // A member that would need a cast: the struct is read as its text, as a whole (as a list is).
    if (fields.some(({ mapped }) => mapped.read !== "value")) return TEXT;
    return { type: { kind: "struct", fields: fields.map(({ name, mapped }) => ({ name, type: mapped.type })) }, read: "value" };
  }
  return Object.hasOwn(SCALARS, type) ? SCALARS[type]! : TEXT;
}

/**
 * A STRUCT's members as DuckDB writes them inside `STRUCT(…)`: `name TYPE` pairs separated by
 * commas outside parentheses and quotes, a name double-quoted (`""` for a quote) when it must be.
 * Null when the text is not of that shape (then the struct is read as its text).
 */
function structMembers(inside: string): { name: string; dataType: string }[] | null {
  const members: { name: string; dataType: string }[] = [];
  let at = 0;
  while (at < inside.length) {
    while (inside[at] === " ") at++;
    let name: string;
    if (inside[at] === '"') {
      name = "";
      at++;
      for (;;) {
        if (at >= inside.length) return null;
        if (inside[at] === '"') {
          if (inside[at + 1] !== '"') break;
          at++;
        }
        name += inside[at++];
      }
      at++;
    } else {
      const word = /^[^\s"(),]+/.exec(inside.slice(at));
      if (word === null) return null;
      name = word[0];
      at += name.length;
    }
    if (inside[at] !== " ") return null;
    // The type runs to the next comma outside parentheses and quotes.
    const start = ++at;
    let depth = 0;
    let quoted = false;
    for (; at < inside.length; at++) {
      const char = inside[at];
      if (char === '"') quoted = !quoted;
      else if (!quoted && char === "(") depth++;
      else if (!quoted && char === ")") depth--;
      else if (!quoted && depth === 0 && char === ",") break;
      if (depth < 0) return null;
    }
    if (depth !== 0 || quoted) return null;
    members.push({ name, dataType: inside.slice(start, at).trim() });
    at++;
  }
  return members.length > 0 ? members : null;
}

/** The select-list expression of a column (quoted), keeping its name. */
export function selectExpression(name: string, mapped: DuckMapped): string {
  const column = quoteIdentifier(name);
  switch (mapped.read) {
    case "value":
      return column;
    case "timestamp":
      return `CAST(${column} AS TIMESTAMP) AS ${column}`;
    case "text":
      return `CAST(${column} AS VARCHAR) AS ${column}`;
  }
}

/** The SQLite storage class each DuckDB type stands for in the dialect (engines/postgres/columns.ts); none: selected only. */
const CLASSES: Record<string, { class: ColumnClass; cast?: string; narrow?: true }> = {
  BIGINT: { class: "int" },
  INTEGER: { class: "int", narrow: true },
  SMALLINT: { class: "int", narrow: true },
  TINYINT: { class: "int", narrow: true },
  UINTEGER: { class: "int", narrow: true },
  USMALLINT: { class: "int", narrow: true },
  UTINYINT: { class: "int", narrow: true },
  // Beyond int64: compared exactly, as a NUMERIC column's values.
  UBIGINT: { class: "numeric" },
  HUGEINT: { class: "numeric" },
  DOUBLE: { class: "real" },
  // A FLOAT widens to DOUBLE exactly: SQLite holds that double.
  FLOAT: { class: "real", cast: "DOUBLE" },
  VARCHAR: { class: "text" },
  UUID: { class: "text", cast: "VARCHAR" },
  JSON: { class: "text", cast: "VARCHAR" },
  BOOLEAN: { class: "bool" },
  BLOB: { class: "blob" },
  DATE: { class: "date" },
  TIMESTAMP: { class: "timestamp" },
  TIMESTAMP_S: { class: "timestamp", cast: "TIMESTAMP" },
  TIMESTAMP_MS: { class: "timestamp", cast: "TIMESTAMP" },
  // Compared as microseconds (the cast truncates): a row with a finer part is refused when read.
  TIMESTAMP_NS: { class: "timestamp", cast: "TIMESTAMP" },
  "TIMESTAMP WITH TIME ZONE": { class: "timestamptz" },
};

/**
 * A DuckDB column as the compiler of SQLite's meaning sees it (CompileTarget.column). A VARCHAR of
 * a DuckDB file may declare a collation (COLLATE NOCASE), which its comparisons would follow: with
 * `collated`, the column is read `COLLATE "C"` (bytes, i.e. code points, as SQLite's BINARY), which
 * DuckDB lets a comparison's column side say. Files' columns have none (and keep their filters
 * pushed down into the Parquet reader).
 */
export function duckColumn(name: string, sourceType: string, collated = true): PostgresColumn {
  const type = sourceType.trim();
  const known = /^DECIMAL\(/.test(type) ? { class: "numeric" as const } : Object.hasOwn(CLASSES, type) ? CLASSES[type] : undefined;
  const identifier = quoteIdentifier(name);
  if (known === undefined) return { name, sourceType, class: null, affinity: "none", sql: identifier, narrow: false };
  return {
    name,
    sourceType,
    class: known.class,
    affinity: AFFINITY[known.class],
    sql: "cast" in known && known.cast !== undefined ? `CAST(${identifier} AS ${known.cast})` : type === "VARCHAR" && collated ? `(${identifier} COLLATE "C")` : identifier,
    narrow: "narrow" in known && known.narrow === true,
  };
}
