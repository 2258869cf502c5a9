/**
 * A compiled expression: PostgreSQL SQL whose value is, row by row, the value SQLite computes for
 * the same expression over the corresponding SQLite table (columns.ts). Every compiled value knows
 * its class statically (PostgreSQL is typed; each operation compiles only for the classes whose
 * meanings it can keep), its SQLite affinity (for comparisons), and, for constants, the value itself
 * (folded at compile time with SQLite's rules, sqlite-numbers.ts).
 */
import type { Affinity, ColumnClass } from "./columns.ts";
import { dialect } from "./dialect.ts";
import { blobLiteral, integerLiteral, realLiteral, textLiteral } from "./literals.ts";
import { notAvailable } from "./refusal.ts";
import { numberFromText } from "./sqlite-numbers.ts";

/**
 * - int: an INTEGER (SQL of type int8, or int4/int2 when `narrow`); real: a REAL (float8);
 * - bool: an INTEGER that is 0 or 1 in SQLite (a comparison's result, a boolean column), SQL of type boolean;
 * - num: INTEGER or REAL depending on the row (coalesce(price, 0)), SQL of type float8 holding the same number;
 * - numeric: a NUMERIC column's value (numeric), compared only;
 * - text, blob: TEXT (text), BLOB (bytea); date, timestamptz, timestamp: TEXT in SQLite ('YYYY-MM-DD', its UTC text);
 * - null: the NULL literal;
 * - mixed: coalesce() of values of several kinds (`choices`), which only comparisons and
 *   conditions read (each choice in turn); its `sql` is NULL exactly when the value is.
 */
export type Class = ColumnClass | "num" | "null" | "mixed";

export type Constant =
  | { kind: "int"; value: bigint }
  | { kind: "real"; value: number }
  | { kind: "text"; value: string }
  | { kind: "blob"; hex: string }
  | { kind: "null" };

export interface Value {
  /** Self-delimiting PostgreSQL SQL: an identifier, a literal, a call or a parenthesised expression. */
  sql: string;
  class: Class;
  affinity: Affinity;
  /** Set when the value is known now (a literal, or an operation on literals). */
  constant?: Constant;
  narrow?: boolean;
  /** For `num`: the largest magnitude its INTEGER rows can have (all exact as doubles, at most 2^53). */
  bound?: bigint;
  /** Text that never reads as a number (a date's text, date()'s result): numeric affinity leaves it text. */
  neverNumeric?: boolean;
  /** For `mixed`: the values coalesce() takes the first non-NULL one of. */
  choices?: Value[];
}

export const NULL_VALUE: Value = { sql: "NULL", class: "null", affinity: "none", constant: { kind: "null" } };

export function constantValue(constant: Constant): Value {
  switch (constant.kind) {
    case "int":
      return { sql: integerLiteral(constant.value), class: "int", affinity: "none", constant };
    case "real":
      return { sql: realLiteral(constant.value), class: "real", affinity: "none", constant };
    case "text":
      return { sql: textLiteral(constant.value), class: "text", affinity: "none", constant };
    case "blob":
      return { sql: blobLiteral(constant.hex), class: "blob", affinity: "none", constant };
    case "null":
      return NULL_VALUE;
  }
}

/** A number known now (booleans are the integers 0 and 1), or undefined. */
export function constantNumber(v: Value): bigint | number | undefined {
  if (v.constant?.kind === "int" || v.constant?.kind === "real") return v.constant.value;
  return undefined;
}

export const isNull = (v: Value) => v.constant?.kind === "null";

/** An INTEGER value as int8 SQL (booleans as 0/1; narrow columns widened). */
export function asInt8(v: Value): string {
  if (v.constant?.kind === "int") return integerLiteral(v.constant.value);
  if (v.class === "bool") return `((${v.sql})::int4)::int8`;
  if (v.class !== "int") throw new Error(`not an integer: ${v.class}`);
  return v.narrow ? `(${v.sql})::int8` : v.sql;
}

/** A number as float8 SQL (SQLite converts INTEGER operands of REAL arithmetic the same way, rounding to nearest). */
export function asFloat8(v: Value): string {
  if (v.class === "real" || v.class === "num") return v.sql;
  return `(${asInt8(v)})::float8`;
}

/** A boolean column or comparison as the INTEGER SQLite holds (0 or 1). */
export function boolAsInt(v: Value): Value {
  if (v.class === "bool" && v.constant !== undefined) return { ...constantValue(v.constant), affinity: v.affinity };
  return v.class === "bool" ? { sql: `(${v.sql})::int4`, class: "int", affinity: v.affinity, narrow: true } : v;
}

/**
 * The text SQLite holds for a date or timestamp (columns.ts): 'YYYY-MM-DD'; 'YYYY-MM-DD HH:MM:SS'
 * in UTC, with the fraction of a second when there is one, without trailing zeros. Either sorts as
 * the value does (years 0001 to 9999).
 */
export function textForm(v: Value): Value {
  const text = (sql: string): Value => ({ sql, class: "text", affinity: "none", neverNumeric: true });
  switch (v.class) {
    case "date":
      return text(dialect().dateText(v.sql));
    case "timestamptz":
    case "timestamp": {
      const utc = v.class === "timestamptz" ? `(${v.sql} AT TIME ZONE 'UTC')` : v.sql;
      return text(dialect().timestampText(utc));
    }
    default:
      return v;
  }
}

/**
 * The value as SQLite's text (what `||`, LIKE, lower() and friends read): integers in decimal,
 * booleans as 0/1, dates and timestamps as their text. A REAL's text is SQLite's own formatting
 * (up to 17 significant digits, '1.0e+20'): not reproduced, so refused.
 */
export function asText(v: Value, construct: string): Value {
  switch (v.class) {
    case "mixed":
      return notAvailable(`${construct} on coalesce() of values of different kinds`, "coalesce values of one kind");
    case "text":
    case "null":
      return v;
    case "date":
    case "timestamptz":
    case "timestamp":
      return textForm(v);
    case "int":
    case "bool":
      if (v.constant?.kind === "int") return constantValue({ kind: "text", value: String(v.constant.value) });
      return { sql: `(${asInt8(v)})::text`, class: "text", affinity: "none" };
    case "real":
    case "num":
    case "numeric":
      return notAvailable(`${construct} on a REAL value`, "SQLite writes REAL numbers as text its own way; compare numbers as numbers, or CAST an integer");
    case "blob":
      return notAvailable(`${construct} on a BLOB`, "SQLite reads the bytes as text; compare blobs with blobs");
  }
}

/**
 * A condition as SQLite reads one (WHERE, AND, OR, NOT): a number is true when it is not zero,
 * NULL is unknown. Text would be read as the number it starts with: refused.
 */
export function condition(v: Value, construct: string): string {
  const constant = constantNumber(v);
  if (constant !== undefined) return constant === 0n || constant === 0 ? "false" : "true";
  if (v.constant?.kind === "text") {
    // A literal: a whole number is itself; text that starts with no digit, sign or point is 0.
    const number = numberFromText(v.constant.value);
    if (number !== null) return number.value === 0n || number.value === 0 ? "false" : "true";
    if (!/^[ \t\n\v\f\r]*[-+.0-9]/.test(v.constant.value)) return "false";
  }
  switch (v.class) {
    case "bool":
      return v.sql;
    case "int":
      return `(${v.sql} <> 0)`;
    case "real":
    case "num":
      return `(${v.sql} <> '0'::float8)`;
    case "numeric":
      return `(${v.sql} <> 0)`;
    case "null":
      return "(NULL::boolean)";
    case "mixed":
      return choosing(v, (choice) => condition(choice, construct));
    default:
      return notAvailable(`${construct} used as a condition`, "SQLite reads text as the number it starts with; compare it with a value instead");
  }
}

/**
 * A test of a `mixed` value, as the test of the choice coalesce() takes: the first one that is not
 * NULL (the last one otherwise, NULL).
 */
export function choosing(v: Value, test: (choice: Value) => string): string {
  const choices = v.choices!;
  const cases = choices.slice(0, -1).map((choice) => `WHEN ${choice.sql} IS NOT NULL THEN ${test(choice)}`);
  return `(CASE ${cases.join(" ")} ELSE ${test(choices.at(-1)!)} END)`;
}

/** `result` (SQL boolean) unless one of the values is NULL: then NULL. */
export function unlessNull(values: Value[], result: "true" | "false"): string {
  if (values.some(isNull)) return "(NULL::boolean)";
  const tested = values.filter((v) => v.constant === undefined);
  if (tested.length === 0) return result;
  return `(CASE WHEN ${tested.map((v) => `${v.sql} IS NULL`).join(" OR ")} THEN NULL ELSE ${result} END)`;
}

/** A boolean SQL result as a value (SQLite: the integer 0 or 1, or NULL). */
export function booleanValue(sql: string): Value {
  if (sql === "true" || sql === "false") {
    return { sql, class: "bool", affinity: "none", constant: { kind: "int", value: sql === "true" ? 1n : 0n } };
  }
  return { sql, class: "bool", affinity: "none" };
}

/** True when `v` is not NULL, NULL when it is: `x < +Infinity` for any number x. */
export const alwaysUnlessNull = (v: Value) => (v.constant !== undefined ? (isNull(v) ? "(NULL::boolean)" : "true") : `(${v.sql} IS NOT NULL OR NULL)`);
/** False when `v` is not NULL, NULL when it is: `x = 2.5` for an integer x. */
export const neverUnlessNull = (v: Value) => (v.constant !== undefined ? (isNull(v) ? "(NULL::boolean)" : "false") : `(${v.sql} IS NULL AND NULL)`);
