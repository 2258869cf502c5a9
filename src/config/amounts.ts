/**
 * Exact decimal amounts (ARCHITECTURE.md §2): the config writes token units ("0.002"), the wire carries
 * integer strings in the token's smallest unit ("2000" for 6 decimals). Conversion is done on the
 * digits, never through floating point, so any size converts exactly.
 */

export type AmountParse = { ok: true; units: bigint } | { ok: false; reason: string };

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Parses a non-negative decimal string into smallest units; the reason says what to write instead. */
export function tryParseDecimalAmount(text: string, decimals: number): AmountParse {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`Invalid token decimals: ${decimals}`);
  const example = decimals > 0 ? `"${formatAmount(2n * 10n ** BigInt(Math.max(decimals - 3, 0)), decimals)}"` : `"5"`;
  const match = DECIMAL.exec(text);
  if (match === null) {
    const reason = /^\s*-/.test(text)
      ? "must not be negative"
      : /^\s*[+-]?[\d.]+e[+-]?\d+\s*$/i.test(text)
        ? "exponent notation is not accepted"
        : `${JSON.stringify(text)} is not a decimal number`;
    return { ok: false, reason: `${reason}; write digits with an optional decimal point, e.g. ${example}` };
  }
  const whole = match[1] ?? "";
  const fraction = match[2] ?? "";
  if (fraction.length > decimals) {
    return {
      ok: false,
      reason:
        `${JSON.stringify(text)} has ${fraction.length} decimal places but the token has ${decimals} decimals; ` +
        (decimals === 0 ? "write a whole number" : `write at most ${decimals} digits after the point`),
    };
  }
  return { ok: true, units: BigInt(whole + fraction.padEnd(decimals, "0")) };
}

/** Parses exactly ("0.002", 6 → 2000n); throws a RangeError saying what is wrong otherwise. */
export function parseDecimalAmount(text: string, decimals: number): bigint {
  const parsed = tryParseDecimalAmount(text, decimals);
  if (!parsed.ok) throw new RangeError(`Invalid amount: ${parsed.reason}`);
  return parsed.units;
}

/** Formats smallest units as a human decimal (2000n, 6 → "0.002"); no trailing zeros. */
export function formatAmount(units: bigint, decimals: number): string {
  const sign = units < 0n ? "-" : "";
  const digits = (units < 0n ? -units : units).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return sign + whole + (fraction === "" ? "" : `.${fraction}`);
}
