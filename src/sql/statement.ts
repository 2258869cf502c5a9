/**
 * The engine-neutral statement (DESIGN.md §14 "One dialect"; ARCHITECTURE.md §4): what a validated
 * query means, as plain data an engine compiles into its own SQL with SQLite's meaning. Built by the
 * same walk that validates the text (dialect.ts, expression.ts, order.ts, limit.ts), so it covers
 * exactly the allow-listed grammar; it crosses from the validation workers with the rest of the
 * ValidatedQuery and is JSON-serialisable (no bigint, no undefined, no non-finite number).
 *
 * The tree is SQLite's reading of the text: parentheses are gone (SQLite keeps none), `==` is `=`,
 * `<>` is `!=`, CAST AS INT is CAST AS INTEGER, and each literal carries the value SQLite gives it
 * (an integer literal beyond int64 is a real, a hexadecimal one is its two's-complement int64).
 * Columns are indices into the queried table's columns (TableInfo.columns).
 */

/** A literal with the value and storage class SQLite gives it. */
export type Literal =
  /** A 64-bit integer as decimal text (hexadecimal literals converted, two's complement). */
  | { type: "integer"; value: string }
  /**
   * A double: `value` is its shortest round-trip decimal text ("1.5", "1e+300", "Infinity", "-0");
   * `text` is the literal as written (SQLite reads up to 19 significant digits exactly: an engine
   * may refuse longer ones).
   */
  | { type: "real"; value: string; text: string }
  | { type: "text"; value: string }
  /** Bytes as lower-case hexadecimal. */
  | { type: "blob"; hex: string }
  | { type: "null" }
  /** TRUE and FALSE: in SQLite the integers 1 and 0 (except after IS / IS NOT, see Expr "truth"). */
  | { type: "bool"; value: boolean };

export type ComparisonOperator = "=" | "!=" | "<" | "<=" | ">" | ">=";
export type BinaryOperator = "AND" | "OR" | ComparisonOperator | "+" | "-" | "*" | "/" | "%" | "||" | "IS" | "IS NOT";
export type CastType = "INTEGER" | "REAL" | "TEXT" | "BLOB" | "NUMERIC";

export type Expr =
  | Literal
  | { type: "column"; column: number }
  | { type: "unary"; op: "-" | "+" | "NOT"; expr: Expr }
  | { type: "binary"; op: BinaryOperator; left: Expr; right: Expr }
  /**
   * `x IS [NOT] TRUE|FALSE`: SQLite's truth test (x is true: non-NULL and not zero), never NULL;
   * not the comparison `x IS 1`.
   */
  | { type: "truth"; not: boolean; value: boolean; expr: Expr }
  /** `escape`: the one character after ESCAPE, or null. */
  | { type: "like"; not: boolean; expr: Expr; pattern: Expr; escape: string | null }
  | { type: "glob"; not: boolean; expr: Expr; pattern: Expr }
  | { type: "between"; not: boolean; expr: Expr; low: Expr; high: Expr }
  /** A sign before a number in the list is part of its literal (`IN (-5)` holds the integer -5). */
  | { type: "in"; not: boolean; expr: Expr; list: Literal[] }
  | { type: "cast"; expr: Expr; to: CastType }
  /** A function of the allow-list by its lower-case name (`substring` is written as given). */
  | { type: "call"; name: string; args: Expr[] };

export interface OrderTerm {
  /** The table column sorted by (an output alias is resolved to its column). */
  column: number;
  descending: boolean;
  /** As written; null: SQLite's default (NULLs first ascending, last descending). */
  nulls: "first" | "last" | null;
}

export interface Statement {
  /** The output columns in order: `*` is every column of the table. */
  columns: { name: string; column: number }[];
  where: Expr | null;
  orderBy: OrderTerm[];
  limit: number | null;
  offset: number | null;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A double's shortest round-trip text, with the sign of zero kept. */
export function realText(value: number): string {
  return Object.is(value, -0) ? "-0" : String(value);
}

/**
 * A number literal as SQLite reads it (its text passed expression.ts's checkLiteral): hexadecimal is
 * a two's-complement int64; decimal digits alone an integer when it fits in int64, else a real;
 * anything with a point or an exponent a real. `negative`: the literal is the operand of a unary
 * minus, which SQLite folds into it (only -9223372036854775808 is an integer that way and not as
 * the negation of a positive one).
 */
export function numberLiteral(text: string, negative = false): Literal {
  if (/^0[xX]/.test(text)) {
    const value = BigInt.asIntN(64, BigInt(text));
    return { type: "integer", value: String(negative ? -value : value) };
  }
  if (/^[0-9]+$/.test(text)) {
    const value = negative ? -BigInt(text) : BigInt(text);
    if (value >= INT64_MIN && value <= INT64_MAX) return { type: "integer", value: String(value) };
  }
  const value = Number(text);
  return { type: "real", value: realText(negative ? -value : value), text: negative ? `-${text}` : text };
}

/** Whether negating the hexadecimal literal `text` is SQLite's "hex literal too big" error. */
export function negatesToHexError(text: string): boolean {
  return /^0[xX]/.test(text) && BigInt.asIntN(64, BigInt(text)) === INT64_MIN;
}

export function blobLiteral(text: string): Literal {
  // X'…' or x'…', whole bytes (checkLiteral).
  return { type: "blob", hex: text.slice(2, -1).toLowerCase() };
}
