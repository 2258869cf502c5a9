/**
 * PostgreSQL's binary numeric (numeric.c numeric_send): int16 ndigits, int16 weight, uint16 sign,
 * uint16 dscale, then ndigits base-10000 digits, the first of weight `weight`. Read exactly, either
 * to the unscaled bigint of a Decimal128(p, s) column or to the text numeric_out prints; a value
 * that the column cannot hold is refused (DESIGN.md §14, §5), never rounded.
 */
import { Refusal } from "./value-refusal.ts";

const POSITIVE = 0x0000;
const NEGATIVE = 0x4000;
const NAN = 0xc000;
const PLUS_INFINITY = 0xd000;
const MINUS_INFINITY = 0xf000;

const HEADER = 8;

/** 10^n as a bigint, computed once per n. */
const POW10: bigint[] = [1n];
export function pow10(n: number): bigint {
  for (let i = POW10.length; i <= n; i++) POW10.push(POW10[i - 1]! * 10n);
  return POW10[n]!;
}

/** The special values' text, or null for a finite number. */
function special(sign: number): string | null {
  if (sign === NAN) return "NaN";
  if (sign === PLUS_INFINITY) return "Infinity";
  if (sign === MINUS_INFINITY) return "-Infinity";
  return null;
}

function header(dv: DataView, pos: number, len: number): { ndigits: number; weight: number; sign: number; dscale: number } {
  if (len < HEADER) throw new Refusal(`a numeric of ${len} bytes (at least 8 expected)`);
  const ndigits = dv.getInt16(pos);
  const weight = dv.getInt16(pos + 2);
  const sign = dv.getUint16(pos + 4);
  const dscale = dv.getUint16(pos + 6);
  if (ndigits < 0 || len !== HEADER + 2 * ndigits) throw new Refusal(`a numeric of ${len} bytes declaring ${ndigits} digits`);
  if (sign !== POSITIVE && sign !== NEGATIVE && special(sign) === null) throw new Refusal(`a numeric with sign word 0x${sign.toString(16)}`);
  return { ndigits, weight, sign, dscale };
}

/**
 * The unscaled value at `scale` (12.3400 at scale 4 is 123400n), refused when it has digits beyond
 * the scale or `precision` digits or more, or is NaN or ±Infinity.
 */
export function numericUnscaled(dv: DataView, pos: number, len: number, precision: number, scale: number): bigint {
  const { ndigits, weight, sign, dscale } = header(dv, pos, len);
  const named = special(sign);
  if (named !== null) throw new Refusal(`numeric ${named} is not a number Decimal128(${precision}, ${scale}) can hold`);
  if (ndigits === 0) return 0n;
  // value = M × 10^exponent with M the digits read as one integer (base 10000), so the unscaled
  // value is M × 10^(exponent + scale): an integer only if the digits below the scale are zeros.
  const exponent = 4 * (weight - ndigits + 1) + scale;
  let unscaled: bigint;
  if (ndigits <= 3 && exponent <= 3 && exponent > -13) {
    // M < 10^12 and the result below 2^53: exact in a double.
    let m = 0;
    for (let i = 0; i < ndigits; i++) m = m * 10_000 + dv.getInt16(pos + HEADER + 2 * i);
    if (exponent >= 0) unscaled = BigInt(m * 10 ** exponent);
    else {
      const divisor = 10 ** -exponent;
      if (m % divisor !== 0) throw beyondScale(dscale, scale, precision);
      unscaled = BigInt(m / divisor);
    }
  } else {
    // More digits than the column can hold, whatever their place: refused before any big product.
    // (PostgreSQL strips zero digits at both ends, so the first and last base-10000 digits are not 0.)
    if (4 * weight + scale > precision || exponent > precision) throw tooManyDigits(precision, scale);
    if (4 * (ndigits - 2) + 2 > precision) throw new Refusal(`a numeric with more significant digits than Decimal128(${precision}, ${scale}) holds`);
    let m = 0n;
    for (let i = 0; i < ndigits; ) {
      // Up to three base-10000 digits at a time in a double (< 10^12), then one bigint step.
      let chunk = 0;
      let width = 0;
      for (; width < 3 && i < ndigits; width++, i++) chunk = chunk * 10_000 + dv.getInt16(pos + HEADER + 2 * i);
      m = m * pow10(4 * width) + BigInt(chunk);
    }
    if (exponent >= 0) unscaled = m * pow10(exponent);
    else {
      const divisor = pow10(-exponent);
      if (m % divisor !== 0n) throw beyondScale(dscale, scale, precision);
      unscaled = m / divisor;
    }
  }
  if (unscaled >= pow10(precision)) throw tooManyDigits(precision, scale);
  return sign === NEGATIVE ? -unscaled : unscaled;
}

function beyondScale(dscale: number, scale: number, precision: number): Refusal {
  return new Refusal(`a numeric with ${dscale} digits after the point, more than Decimal128(${precision}, ${scale}) holds`);
}

function tooManyDigits(precision: number, scale: number): Refusal {
  return new Refusal(`a numeric with more than ${precision - scale} digits before the point, more than Decimal128(${precision}, ${scale}) holds`);
}

/**
 * The exact text numeric_out prints (numeric.c get_str_from_var): the integer part without leading
 * zeros, then exactly dscale digits after the point; "NaN", "Infinity", "-Infinity" as printed.
 */
export function numericText(dv: DataView, pos: number, len: number): string {
  const { ndigits, weight, sign, dscale } = header(dv, pos, len);
  const named = special(sign);
  if (named !== null) return named;
  const digit = (i: number) => (i >= 0 && i < ndigits ? dv.getInt16(pos + HEADER + 2 * i) : 0);
  let text = sign === NEGATIVE ? "-" : "";
  if (weight < 0) text += "0";
  else {
    text += String(digit(0));
    for (let i = 1; i <= weight; i++) text += String(digit(i)).padStart(4, "0");
  }
  if (dscale > 0) {
    let fraction = "";
    for (let i = weight + 1; fraction.length < dscale; i++) fraction += String(digit(i)).padStart(4, "0");
    text += "." + fraction.slice(0, dscale);
  }
  return text;
}
