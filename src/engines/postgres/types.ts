/**
 * PostgreSQL type → column type (DESIGN.md §14 "Arrow types are the engine's, exactly"), and how
 * each column's values travel in a binary COPY (`PgWire`), so that the decoder (copy-binary.ts)
 * reads them exactly and the SELECT list asks for the form it decodes.
 *
 *   int2/int4/int8 → int16/int32/int64       float4/float8 → float32/float64
 *   numeric(p,s), p ≤ 38, 0 ≤ s ≤ p → decimal128(p,s); any other numeric → utf8 of its exact text
 *   text/varchar/bpchar/name/json/jsonb/uuid → utf8   bool → bool   bytea → binary
 *   date → date32   timestamp → timestamp_us   timestamptz → timestamp_us_utc
 *   a one-dimensional array of these → list<…>; anything else (and arrays of anything else) → utf8
 *   of its text form, selected as `col::text`.
 * A domain is its base type (with the domain's typmod): its values are the base type's values.
 */

import { DECIMAL128_MAX_PRECISION, type ArrowKind, type ColumnType as ArrowColumnType } from "../../arrow/types.ts";

/**
 * The column types the encoders take (arrow/types.ts), restricted to the kinds this engine
 * produces: all but SQLite's millisecond timestamp.
 */
export type PgColumnKind = Exclude<ArrowKind, "timestamp">;

export interface ColumnType extends ArrowColumnType {
  kind: PgColumnKind;
  /** list only: the element's type (elements are nullable). */
  child?: ColumnType;
}

/**
 * A value's binary COPY form, as the decoder reads it. "text" is every form whose bytes are UTF-8
 * text: text, varchar, bpchar, name, json, and any value selected as `::text`. "numeric" is
 * decoded to the unscaled bigint of a decimal128 column, or to its exact text for a utf8 column.
 */
export type PgWire =
  | "int2"
  | "int4"
  | "int8"
  | "float4"
  | "float8"
  | "numeric"
  | "bool"
  | "text"
  | "jsonb"
  | "uuid"
  | "bytea"
  | "date"
  | "timestamp"
  | { array: PgWire };

/** What the decoder needs of one column of a COPY (a `PgColumn` is one). */
export interface DecodeColumn {
  name: string;
  type: ColumnType;
  wire: PgWire;
}

/** A base (non-domain) type: its OID, its typmod (-1: none), and for an array its element's type. */
export interface PgTypeRef {
  oid: number;
  typmod: number;
  element?: PgTypeRef;
}

export interface PgMappedType {
  type: ColumnType;
  wire: PgWire;
  /** True when the value is selected as `::text` (a type whose binary form is not decoded). */
  asText: boolean;
}

/** The built-in OIDs decoded from their binary form (pg_type.dat). */
export const PG_OID = {
  bool: 16,
  bytea: 17,
  name: 19,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  json: 114,
  float4: 700,
  float8: 701,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  uuid: 2950,
  jsonb: 3802,
} as const;

/** Array type OID → element OID for the built-in types above (pg_type.dat typarray). */
export const PG_ARRAY_ELEMENT: ReadonlyMap<number, number> = new Map([
  [1000, PG_OID.bool],
  [1001, PG_OID.bytea],
  [1003, PG_OID.name],
  [1016, PG_OID.int8],
  [1005, PG_OID.int2],
  [1007, PG_OID.int4],
  [1009, PG_OID.text],
  [199, PG_OID.json],
  [1021, PG_OID.float4],
  [1022, PG_OID.float8],
  [1014, PG_OID.bpchar],
  [1015, PG_OID.varchar],
  [1182, PG_OID.date],
  [1115, PG_OID.timestamp],
  [1185, PG_OID.timestamptz],
  [1231, PG_OID.numeric],
  [2951, PG_OID.uuid],
  [3807, PG_OID.jsonb],
]);

/** Arrow's Decimal128 holds 38 decimal digits. */
export { DECIMAL128_MAX_PRECISION };

const SCALARS: ReadonlyMap<number, { type: ColumnType; wire: PgWire }> = new Map([
  [PG_OID.int2, { type: { kind: "int16" }, wire: "int2" }],
  [PG_OID.int4, { type: { kind: "int32" }, wire: "int4" }],
  [PG_OID.int8, { type: { kind: "int64" }, wire: "int8" }],
  [PG_OID.float4, { type: { kind: "float32" }, wire: "float4" }],
  [PG_OID.float8, { type: { kind: "float64" }, wire: "float8" }],
  [PG_OID.bool, { type: { kind: "bool" }, wire: "bool" }],
  [PG_OID.text, { type: { kind: "utf8" }, wire: "text" }],
  [PG_OID.varchar, { type: { kind: "utf8" }, wire: "text" }],
  [PG_OID.bpchar, { type: { kind: "utf8" }, wire: "text" }],
  [PG_OID.name, { type: { kind: "utf8" }, wire: "text" }],
  [PG_OID.json, { type: { kind: "utf8" }, wire: "text" }],
  [PG_OID.jsonb, { type: { kind: "utf8" }, wire: "jsonb" }],
  [PG_OID.uuid, { type: { kind: "utf8" }, wire: "uuid" }],
  [PG_OID.bytea, { type: { kind: "binary" }, wire: "bytea" }],
  [PG_OID.date, { type: { kind: "date32" }, wire: "date" }],
  [PG_OID.timestamp, { type: { kind: "timestamp_us" }, wire: "timestamp" }],
  [PG_OID.timestamptz, { type: { kind: "timestamp_us_utc" }, wire: "timestamp" }],
]);

const AS_TEXT: PgMappedType = { type: { kind: "utf8" }, wire: "text", asText: true };

/**
 * Precision and scale of a numeric typmod (PostgreSQL 15 numeric.c: `((p << 16) | (s & 0x7ff)) + 4`,
 * the scale an 11-bit two's complement), or null for an unconstrained numeric (typmod -1).
 */
export function numericTypmod(typmod: number): { precision: number; scale: number } | null {
  if (typmod < 4) return null;
  const t = typmod - 4;
  return { precision: (t >> 16) & 0xffff, scale: ((t & 0x7ff) ^ 1024) - 1024 };
}

/** The column type and wire form of a base type (domains already resolved to their base). */
export function mapPgType(ref: PgTypeRef): PgMappedType {
  if (ref.element !== undefined) {
    const element = mapPgType(ref.element);
    // An array whose elements are read as text is itself read as text: `{…}` as PostgreSQL prints it.
    if (element.asText) return AS_TEXT;
    return { type: { kind: "list", child: element.type }, wire: { array: element.wire }, asText: false };
  }
  if (ref.oid === PG_OID.numeric) {
    const declared = numericTypmod(ref.typmod);
    // Decimal128(p, s) needs 1 ≤ p ≤ 38 and 0 ≤ s ≤ p (COLUMN-TYPES.md); PostgreSQL 15 also allows a
    // negative scale or one above the precision: those stay exact as text.
    if (declared !== null && declared.precision >= 1 && declared.precision <= DECIMAL128_MAX_PRECISION && declared.scale >= 0 && declared.scale <= declared.precision) {
      return { type: { kind: "decimal128", precision: declared.precision, scale: declared.scale }, wire: "numeric", asText: false };
    }
    return { type: { kind: "utf8" }, wire: "numeric", asText: false };
  }
  const scalar = SCALARS.get(ref.oid);
  return scalar === undefined ? AS_TEXT : { ...scalar, asText: false };
}

/**
 * The type reference of a built-in OID without catalog access (a result column described by its
 * OID only, e.g. an expression's type): arrays of the built-in types above resolve to their element.
 */
export function builtinTypeRef(oid: number, typmod = -1): PgTypeRef {
  const element = PG_ARRAY_ELEMENT.get(oid);
  return element === undefined ? { oid, typmod } : { oid, typmod, element: { oid: element, typmod } };
}

/** A PostgreSQL identifier, always quoted: names are used exactly as the catalog spells them. */
export function quoteIdent(name: string): string {
  if (name.includes("\0")) throw new Error(`a PostgreSQL identifier cannot contain a NUL character: ${JSON.stringify(name)}`);
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The SELECT-list expression that reads `column` in the form its wire expects: the quoted name, or
 * the quoted name cast to text for a type whose binary form is not decoded. `qualifier` (already
 * quoted, e.g. a table alias) prefixes the name. The output column keeps the column's name.
 */
export function selectExpression(column: { name: string; asText: boolean }, qualifier?: string): string {
  const ref = (qualifier === undefined ? "" : `${qualifier}.`) + quoteIdent(column.name);
  return column.asText ? `${ref}::text AS ${quoteIdent(column.name)}` : ref;
}
