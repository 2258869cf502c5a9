/**
 * Column types (ARCHITECTURE.md §5, DESIGN §14). SQLite's declared type → Arrow kind follows SQLite's
 * affinity rules, so a schema is known before any row is read. The other engines (PostgreSQL,
 * DuckDB) give their columns the further kinds below; every encoder takes any of them.
 */
import {
  Binary,
  Bool,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  List,
  Struct,
  TimeUnit,
  Timestamp,
  Utf8,
  type DataType,
} from "apache-arrow";

/** The kinds a SQLite column can have (`arrowKindFor`); "timestamp" is Timestamp(ms, "UTC"). */
export type SqliteKind = "int64" | "utf8" | "binary" | "float64" | "bool" | "date32" | "timestamp";

/**
 * Every kind (DESIGN §14): SQLite's, and Int16, Int32, Float32, Decimal128(p, s) (the unscaled
 * value as a bigint), Timestamp(µs) without a zone (a wall-clock time: PostgreSQL `timestamp`),
 * Timestamp(µs, "UTC") (an instant: `timestamptz`), List<child> (a JS array of child values, each
 * of which may be null), Struct<fields> (a JS object with a property per member, each of which may be
 * null; DuckDB's STRUCT).
 */
export type ArrowKind = SqliteKind | "int16" | "int32" | "float32" | "decimal128" | "timestamp_us" | "timestamp_us_utc" | "list" | "struct";

/**
 * A column's full type: its kind, and what the kind needs beside it (decimal128: precision 1..38 and
 * scale 0..precision; list: the element's type; struct: its members, in order). EncoderColumn and
 * the catalog's ColumnInfo are ColumnTypes.
 */
export interface ColumnType {
  kind: ArrowKind;
  precision?: number;
  scale?: number;
  child?: ColumnType;
  fields?: readonly StructField[];
}

/** A member of a struct: its name and type (any ColumnType, nested ones included); always nullable. */
export interface StructField {
  name: string;
  type: ColumnType;
}

/** The largest precision of a Decimal128. */
export const DECIMAL128_MAX_PRECISION = 38;

/** Ordered as SQLite applies its affinity rules: INT wins over CHAR, CHAR over BLOB, and so on. */
export function arrowKindFor(declaredType: string): SqliteKind {
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

/**
 * Throws when a column type lacks what its kind needs: a programming error in an engine, found when
 * the encoder is made rather than on the first row.
 */
export function checkColumnType(type: ColumnType): void {
  if (type.kind === "decimal128") {
    const { precision, scale } = type;
    if (!(Number.isInteger(precision) && precision! >= 1 && precision! <= DECIMAL128_MAX_PRECISION && Number.isInteger(scale) && scale! >= 0 && scale! <= precision!)) {
      throw new TypeError(`a decimal128 column needs a precision of 1 to 38 and a scale of 0 to its precision, got precision ${precision} and scale ${scale}`);
    }
  } else if (type.kind === "list") {
    if (type.child === undefined) throw new TypeError("a list column needs the type of its elements (child)");
    checkColumnType(type.child);
  } else if (type.kind === "struct") {
    const fields = type.fields;
    if (!Array.isArray(fields) || fields.length === 0) throw new TypeError("a struct column needs its members (fields), at least one");
    const names = new Set<string>();
    for (const field of fields) {
      if (typeof field.name !== "string" || names.has(field.name)) throw new TypeError(`a struct column's members need distinct names, got ${JSON.stringify(field.name)} twice or not a string`);
      names.add(field.name);
      checkColumnType(field.type);
    }
  }
}

/** The Arrow type of a column type; a kind alone for the kinds that need nothing beside it. */
export function arrowTypeFor(type: ArrowKind | ColumnType): DataType {
  const column: ColumnType = typeof type === "string" ? { kind: type } : type;
  switch (column.kind) {
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
    case "int16":
      return new Int16();
    case "int32":
      return new Int32();
    case "float32":
      return new Float32();
    case "decimal128":
      checkColumnType(column);
      // apache-arrow takes the scale first.
      return new Decimal(column.scale!, column.precision!, 128);
    case "timestamp_us":
      return new Timestamp(TimeUnit.MICROSECOND, null);
    case "timestamp_us_utc":
      return new Timestamp(TimeUnit.MICROSECOND, "UTC");
    case "list":
      checkColumnType(column);
      return new List(new Field("item", arrowTypeFor(column.child!), true));
    case "struct":
      checkColumnType(column);
      return new Struct(column.fields!.map((field) => new Field(field.name, arrowTypeFor(field.type), true)));
  }
}
