/**
 * SQLite's comparisons on PostgreSQL (https://sqlite.org/datatype3.html §4): affinity first (a
 * column's affinity converts the other operand: '10' is the number 10 next to an INTEGER column,
 * 10 is the text '10' next to a TEXT one), then storage classes: numbers compare exactly across
 * INTEGER and REAL (PostgreSQL rounds int8 to float8: 2^53 + 1 = 2^53 there), text compares by code
 * point (COLLATE "C"), and values of two classes compare by class (a number is below any text,
 * which is below any blob). Text read from the table next to a number would be converted when it
 * reads as one: refused. Dates and timestamps are their text in SQLite, so they compare as that
 * text unless a canonical literal lets the comparison stay on the column (and its index).
 */
import type { Affinity } from "./columns.ts";
import { dialect } from "./dialect.ts";
import { numericLiteral } from "./literals.ts";
import { notAvailable } from "./refusal.ts";
import { compareNumbers, INT64_MAX, INT64_MIN, nextDown, nextUp, numberFromText, significantDigits } from "./sqlite-numbers.ts";
import { realText, type ComparisonOperator } from "../../sql/statement.ts";
import {
  alwaysUnlessNull, asFloat8, asInt8, asText, boolAsInt, choosing, constantNumber, constantValue, isNull, neverUnlessNull, textForm, unlessNull,
  type Value,
} from "./values.ts";

const FLIPPED: Record<ComparisonOperator, ComparisonOperator> = { "=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=" };

const isNumericAffinity = (a: Affinity) => a === "integer" || a === "real" || a === "numeric";

/** The affinity SQLite applies to both operands of a comparison (expr.c sqlite3CompareAffinity). */
function comparisonAffinity(a: Affinity, b: Affinity): "numeric" | "text" | "none" {
  if (a !== "none" && b !== "none") return isNumericAffinity(a) || isNumericAffinity(b) ? "numeric" : "none";
  const one = a === "none" ? b : a;
  return isNumericAffinity(one) ? "numeric" : one === "text" ? "text" : "none";
}

/** Numeric affinity: text that reads as a number becomes one (knowable for a literal, or text that never reads as one). */
function withNumericAffinity(v: Value, construct: string): Value {
  if (v.class !== "text" || v.neverNumeric === true) return v;
  if (v.constant?.kind !== "text") {
    return notAvailable(
      `${construct}, text read from the table next to a number`,
      "SQLite converts such text to a number when it reads as one; compare text with text or numbers with numbers",
    );
  }
  const number = numberFromText(v.constant.value);
  if (number === null) return v;
  if (number.digits > 17) notAvailable(`${construct}, with a number of more than 17 significant digits`);
  return constantValue(typeof number.value === "bigint" ? { kind: "int", value: number.value } : { kind: "real", value: number.value });
}

/** Text affinity: numbers become their text. */
function withTextAffinity(v: Value, construct: string): Value {
  return v.class === "int" || v.class === "bool" || v.class === "real" || v.class === "num" || v.class === "numeric" ? asText(v, construct) : v;
}

function withAffinity(a: Value, b: Value, construct: string): [Value, Value] {
  switch (comparisonAffinity(a.affinity, b.affinity)) {
    case "numeric":
      return [withNumericAffinity(a, construct), withNumericAffinity(b, construct)];
    case "text":
      return [withTextAffinity(a, construct), withTextAffinity(b, construct)];
    case "none":
      return [a, b];
  }
}

type Kind = "number" | "text" | "blob";

const RANK: Record<Kind, number> = { number: 0, text: 1, blob: 2 };

function kindOf(v: Value): Kind {
  switch (v.class) {
    case "text":
    case "date":
    case "timestamptz":
    case "timestamp":
      return "text";
    case "blob":
      return "blob";
    default:
      return "number";
  }
}

export interface CompareOptions {
  /** false: no affinity conversion (nullif() compares its arguments as they are, func.c). */
  affinity?: boolean;
}

/** `a op b` with SQLite's meaning, as PostgreSQL boolean SQL (NULL when either side is NULL). */
export function compare(a: Value, op: ComparisonOperator, b: Value, construct: string, options: CompareOptions = {}): string {
  // coalesce() of several kinds: the comparison of the choice it takes (affinity none, as coalesce's).
  if (a.class === "mixed") return choosing(a, (choice) => compare(choice, op, b, construct, options));
  if (b.class === "mixed") return choosing(b, (choice) => compare(a, op, choice, construct, options));
  if (options.affinity !== false) [a, b] = withAffinity(a, b, construct);
  if (isNull(a) || isNull(b)) return "(NULL::boolean)";
  const kind = kindOf(a);
  // Two storage classes: NULL < numbers < text < blob (https://sqlite.org/datatype3.html §4.1).
  if (kind !== kindOf(b)) return unlessNull([a, b], fold(RANK[kind] - RANK[kindOf(b)], op) as "true" | "false");
  if (kind === "number") return compareNumbers2(a, op, b, construct);
  if (kind === "text") return compareTexts(a, op, b);
  if (a.constant?.kind === "blob" && b.constant?.kind === "blob") return fold(compareBytes(a.constant.hex, b.constant.hex), op);
  return `(${a.sql} ${op} ${b.sql})`;
}

/** SQLite's `a IS b`: equal, or both NULL; never NULL itself. */
export function same(a: Value, b: Value, construct: string): string {
  if (a.class === "mixed") return choosing(a, (choice) => same(choice, b, construct));
  if (b.class === "mixed") return choosing(b, (choice) => same(a, choice, construct));
  [a, b] = withAffinity(a, b, construct);
  if (isNull(a) && isNull(b)) return "true";
  if (isNull(a)) return `(${b.sql} IS NULL)`;
  if (isNull(b)) return `(${a.sql} IS NULL)`;
  // Values of two classes are never equal: only two NULLs are the same.
  if (kindOf(a) !== kindOf(b)) return `(${a.sql} IS NULL AND ${b.sql} IS NULL)`;
  const equal = compare(a, "=", b, construct);
  if (a.constant !== undefined || b.constant !== undefined) return `(COALESCE(${equal}, false))`;
  return `(CASE WHEN ${a.sql} IS NULL OR ${b.sql} IS NULL THEN ${a.sql} IS NULL AND ${b.sql} IS NULL ELSE ${equal} END)`;
}

function fold(order: number, op: ComparisonOperator): string {
  const result = { "=": order === 0, "!=": order !== 0, "<": order < 0, "<=": order <= 0, ">": order > 0, ">=": order >= 0 }[op];
  return result ? "true" : "false";
}

function compareNumbers2(a: Value, op: ComparisonOperator, b: Value, construct: string): string {
  const ca = constantNumber(a);
  const cb = constantNumber(b);
  if (ca !== undefined && cb !== undefined) return fold(compareNumbers(ca, cb), op);
  if (a.class === "bool" && b.class === "bool") return `(${a.sql} ${op} ${b.sql})`;
  a = boolAsInt(a);
  b = boolAsInt(b);
  if (a.class === "numeric" || b.class === "numeric") return compareNumeric(a, op, b, construct);
  const aInt = a.class === "int";
  const bInt = b.class === "int";
  // int2/int4/int8 compare exactly with each other in PostgreSQL (and keep their indexes).
  if (aInt === bInt) return `(${a.sql} ${op} ${b.sql})`;
  return aInt ? integerWithReal(a, op, b) : integerWithReal(b, FLIPPED[op], a);
}

/**
 * A NUMERIC column's values are REAL or INTEGER in SQLite: compared with decimals of at most 15
 * significant digits, the doubles order as the exact decimals PostgreSQL compares (15 digits
 * survive a double both ways).
 */
function compareNumeric(a: Value, op: ComparisonOperator, b: Value, construct: string): string {
  const operand = (v: Value): string => {
    if (v.class === "num") return notAvailable(`${construct}, comparing a NUMERIC column with coalesce() of INTEGER and REAL values`);
    if (v.constant?.kind === "real") {
      const text = realText(v.constant.value);
      if (!Number.isFinite(v.constant.value)) return v.sql;
      if (significantDigits(text) > 15) notAvailable(`${construct}, comparing a NUMERIC column with a number of more than 15 significant digits`);
      return numericLiteral(text);
    }
    return v.class === "int" ? asInt8(v) : v.sql;
  };
  return `(${operand(a)} ${op} ${operand(b)})`;
}

/** An INTEGER and a REAL, compared exactly (sqlite3IntFloatCompare), whichever is known now. */
function integerWithReal(i: Value, op: ComparisonOperator, r: Value): string {
  const real = constantNumber(r);
  if (real !== undefined) return integerWithRealConstant(i, op, real as number);
  const integer = constantNumber(i);
  if (integer !== undefined) return realWithIntegerConstant(r, FLIPPED[op], integer as bigint);
  const int8 = asInt8(i);
  const asDouble = `(${int8})::float8`;
  // The double nearest the integer decides unless it equals the REAL; then the REAL is a whole
  // number, exact as int8 below 2^63 (the one double above every int8 is 2^63 itself).
  const beyond = op === "<" || op === "<=" || op === "!=" ? "true" : "false";
  return (
    `(CASE WHEN ${int8} IS NULL OR ${r.sql} IS NULL THEN NULL WHEN ${asDouble} <> ${r.sql} THEN ${asDouble} ${op} ${r.sql} ` +
    `WHEN ${r.sql} >= '9223372036854775808'::float8 THEN ${beyond} ELSE ${int8} ${op} (${r.sql})::int8 END)`
  );
}

function integerWithRealConstant(i: Value, op: ComparisonOperator, r: number): string {
  const int8 = asInt8(i);
  const floor = Number.isFinite(r) ? BigInt(Math.floor(r)) : r > 0 ? INT64_MAX + 1n : INT64_MIN - 1n;
  const ceil = Number.isFinite(r) ? BigInt(Math.ceil(r)) : floor;
  const literal = (v: bigint) => constantValue({ kind: "int", value: v }).sql;
  switch (op) {
    case "=":
    case "!=": {
      const whole = Number.isInteger(r) && floor >= INT64_MIN && floor <= INT64_MAX;
      if (whole) return `(${int8} ${op} ${literal(floor)})`;
      return op === "=" ? neverUnlessNull(i) : alwaysUnlessNull(i);
    }
    case "<":
      // i < r ⇔ i < ceil(r)
      return ceil > INT64_MAX ? alwaysUnlessNull(i) : ceil <= INT64_MIN ? neverUnlessNull(i) : `(${int8} < ${literal(ceil)})`;
    case ">=":
      return ceil > INT64_MAX ? neverUnlessNull(i) : ceil <= INT64_MIN ? alwaysUnlessNull(i) : `(${int8} >= ${literal(ceil)})`;
    case "<=":
      // i ≤ r ⇔ i ≤ floor(r)
      return floor >= INT64_MAX ? alwaysUnlessNull(i) : floor < INT64_MIN ? neverUnlessNull(i) : `(${int8} <= ${literal(floor)})`;
    case ">":
      return floor >= INT64_MAX ? neverUnlessNull(i) : floor < INT64_MIN ? alwaysUnlessNull(i) : `(${int8} > ${literal(floor)})`;
  }
}

function realWithIntegerConstant(r: Value, op: ComparisonOperator, k: bigint): string {
  const nearest = Number(k);
  const float = (x: number) => constantValue({ kind: "real", value: x }).sql;
  if (BigInt(nearest) === k) return `(${asFloat8(r)} ${op} ${float(nearest)})`;
  // k lies strictly between two doubles: no REAL equals it.
  const [below, above] = BigInt(nearest) > k ? [nextDown(nearest), nearest] : [nearest, nextUp(nearest)];
  switch (op) {
    case "=":
      return neverUnlessNull(r);
    case "!=":
      return alwaysUnlessNull(r);
    case "<":
    case "<=":
      return `(${asFloat8(r)} <= ${float(below)})`;
    case ">":
    case ">=":
      return `(${asFloat8(r)} >= ${float(above)})`;
  }
}

/** Code point order, as SQLite's BINARY collation compares UTF-8 bytes (JS compares UTF-16 units). */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** memcmp, then the shorter first: lower-case hex compares the same way. */
function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareTexts(a: Value, op: ComparisonOperator, b: Value): string {
  if (a.constant?.kind === "text" && b.constant?.kind === "text") return fold(compareCodePoints(a.constant.value, b.constant.value), op);
  if (a.class === "text" && b.class === "text") return `(${a.sql} ${op} ${dialect().binary(b.sql)})`;
  if (b.constant?.kind === "text" && a.class !== "text") return temporalWithText(a, op, b.constant.value) ?? asTexts(a, op, b);
  if (a.constant?.kind === "text" && b.class !== "text") return temporalWithText(b, FLIPPED[op], a.constant.value) ?? asTexts(a, op, b);
  if (a.class === b.class) return `(${a.sql} ${op} ${b.sql})`;
  return asTexts(a, op, b);
}

const asTexts = (a: Value, op: ComparisonOperator, b: Value) => `(${textForm(a).sql} ${op} ${dialect().binary(textForm(b).sql)})`;

/**
 * A date or timestamp column against a canonical literal, on the column itself (its index stays
 * usable): the text 'YYYY-MM-DD' a date holds orders as the date; a timestamp's text
 * 'YYYY-MM-DD HH:MM:SS[.ffffff]' orders as the timestamp, and is longer than any date written
 * alone (so past it on that day). Null: no such shortcut, compare the texts.
 */
function temporalWithText(t: Value, op: ComparisonOperator, literal: string): string | null {
  const day = canonicalDate(literal.slice(0, 10));
  if (day === null) return null;
  if (t.class === "date") {
    if (literal.length === 10) return `(${t.sql} ${op} '${day}'::date)`;
    // The date's text is a proper prefix of the literal on that day: below it.
    return prefixOf(t, op, `'${day}'::date`, "<=", ">");
  }
  const midnight = t.class === "timestamptz" ? `'${day} 00:00:00+00'::timestamptz` : `'${day} 00:00:00'::timestamp`;
  if (literal.length === 10) return prefixOf(t, op, midnight, "<", ">=");
  const time = /^ ([0-9]{2}):([0-9]{2}):([0-9]{2})$/.exec(literal.slice(10));
  if (time === null || Number(time[1]) > 23 || Number(time[2]) > 59 || Number(time[3]) > 59) return null;
  const instant = t.class === "timestamptz" ? `'${literal}+00'::timestamptz` : `'${literal}'::timestamp`;
  return `(${t.sql} ${op} ${instant})`;
}

/** `t op literal` where t's text and the literal share no equal value: `below`/`above` say how t relates to `bound` on each side. */
function prefixOf(t: Value, op: ComparisonOperator, bound: string, below: "<" | "<=", above: ">" | ">="): string {
  switch (op) {
    case "=":
      return neverUnlessNull(t);
    case "!=":
      return alwaysUnlessNull(t);
    case "<":
    case "<=":
      return `(${t.sql} ${below} ${bound})`;
    case ">":
    case ">=":
      return `(${t.sql} ${above} ${bound})`;
  }
}

/** 'YYYY-MM-DD' when the text is a valid date of years 0001–9999 (PostgreSQL's proleptic Gregorian calendar), else null. */
export function canonicalDate(text: string): string | null {
  const match = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(text);
  if (match === null) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const days = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 ? (leap ? 29 : 28) : days)) return null;
  return text;
}
