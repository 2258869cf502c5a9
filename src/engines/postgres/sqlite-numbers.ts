/**
 * SQLite's arithmetic on constants, done at compile time so that PostgreSQL is handed the value
 * SQLite would compute (ARCHITECTURE.md §4 "One dialect"): numbers compare exactly across INTEGER
 * and REAL, integer overflow becomes REAL, division by zero is NULL, text that reads as a number
 * becomes one under numeric affinity.
 */

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** A number as SQLite holds it: INTEGER (bigint) or REAL (number). */
export type SqliteNumber = bigint | number;

/** -1, 0 or 1, exactly (no rounding of the integer to a double, as sqlite3IntFloatCompare). NaN never reaches here. */
export function compareNumbers(a: SqliteNumber, b: SqliteNumber): -1 | 0 | 1 {
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number") return (-compareNumbers(b, a) || 0) as -1 | 0 | 1;
  const r = b as number;
  if (r === Infinity) return -1;
  if (r === -Infinity) return 1;
  const floor = BigInt(Math.floor(r));
  if (a < floor) return -1;
  if (a > floor) return 1;
  return Number.isInteger(r) ? 0 : -1;
}

/** SQLite's whitespace around a number in text (sqlite3Isspace). */
const SPACE = "[ \\t\\n\\v\\f\\r]*";
const NUMBER_TEXT = new RegExp(`^${SPACE}([+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?)${SPACE}$`);

/**
 * What numeric affinity makes of a text (vdbe.c applyNumericAffinity): the number it reads as in
 * whole (spaces around allowed; no hexadecimal, no 'Inf'), or null when it stays text. A number
 * with more than 17 significant digits is refused by the caller (SQLite reads only 19 exactly).
 */
export function numberFromText(text: string): { value: SqliteNumber; digits: number } | null {
  const match = NUMBER_TEXT.exec(text);
  if (match === null) return null;
  const written = match[1]!;
  const digits = significantDigits(written);
  if (/^[+-]?[0-9]+$/.test(written)) {
    const value = BigInt(written);
    if (value >= INT64_MIN && value <= INT64_MAX) return { value, digits };
  }
  return { value: Number(written), digits };
}

/** Significant digits of a decimal number's text (leading and trailing zeros of the mantissa aside). */
export function significantDigits(text: string): number {
  const mantissa = text.replace(/^[+-]/, "").replace(/[eE].*$/, "").replace(".", "");
  return mantissa.replace(/^0+/, "").replace(/0+$/, "").length;
}

/** The nearest doubles below and above (IEEE 754 bit steps). */
export function nextDown(x: number): number {
  return -nextUp(-x);
}

export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  view.setBigUint64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** SQLite's REAL → INTEGER (vdbemem.c doubleToInt64): truncation, saturating at the int64 bounds. */
export function doubleToInt64(r: number): bigint {
  if (r <= -9223372036854775808) return INT64_MIN;
  if (r >= 9223372036854775807) return INT64_MAX;
  return BigInt(Math.trunc(r));
}

export type ArithmeticOperator = "+" | "-" | "*" | "/" | "%";

/**
 * SQLite's arithmetic on two numbers (vdbe.c OP_Add…OP_Remainder): INTEGER operands stay INTEGER
 * unless the result overflows (then both are converted to REAL); division by zero is NULL; `%`
 * takes the remainder of the operands as integers; a NaN result is NULL.
 */
export function arithmetic(op: ArithmeticOperator, a: SqliteNumber, b: SqliteNumber): SqliteNumber | null {
  if (typeof a === "bigint" && typeof b === "bigint") {
    let result: bigint;
    switch (op) {
      case "+":
        result = a + b;
        break;
      case "-":
        result = a - b;
        break;
      case "*":
        result = a * b;
        break;
      case "/":
        if (b === 0n) return null;
        if (a === INT64_MIN && b === -1n) return realArithmetic(op, Number(a), Number(b));
        return a / b;
      case "%":
        if (b === 0n) return null;
        return b === -1n ? 0n : a % b;
    }
    if (result >= INT64_MIN && result <= INT64_MAX) return result;
    return realArithmetic(op, Number(a), Number(b));
  }
  return realArithmetic(op, Number(a), Number(b));
}

function realArithmetic(op: ArithmeticOperator, a: number, b: number): number | null {
  let result: number;
  switch (op) {
    case "+":
      result = a + b;
      break;
    case "-":
      result = a - b;
      break;
    case "*":
      result = a * b;
      break;
    case "/":
      if (b === 0) return null;
      result = a / b;
      break;
    case "%": {
      const divisor = doubleToInt64(b);
      if (divisor === 0n) return null;
      return Number(doubleToInt64(a) % (divisor === -1n ? 1n : divisor));
    }
  }
  return Number.isNaN(result) ? null : result;
}
