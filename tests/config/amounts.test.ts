import { describe, expect, test } from "bun:test";
import { formatAmount, parseDecimalAmount, tryParseDecimalAmount } from "../../src/config/amounts.ts";

describe("parseDecimalAmount converts exactly", () => {
  const cases: [string, number, bigint][] = [
    ["0.002", 6, 2000n],
    ["0.000001", 6, 1n],
    ["1000000.123456", 6, 1000000123456n],
    ["1.00", 6, 1000000n],
    ["1", 6, 1000000n],
    ["0", 6, 0n],
    ["007.5", 6, 7500000n],
    ["0.1", 18, 100000000000000000n],
    ["42", 0, 42n],
    ["0.5", 1, 5n],
    // Beyond 2^64 (and far beyond 2^53): still exact, no float anywhere.
    ["123456789012345678901234567890.123456", 6, 123456789012345678901234567890123456n],
    ["18446744073709551616", 0, 18446744073709551616n],
  ];
  for (const [text, decimals, units] of cases) {
    test(`${text} with ${decimals} decimals → ${units}`, () => {
      expect(parseDecimalAmount(text, decimals)).toBe(units);
    });
  }
});

describe("parseDecimalAmount refuses what is not an exact non-negative decimal", () => {
  const cases: [string, number, string][] = [
    ["0.0000001", 6, "7 decimal places but the token has 6 decimals"],
    ["1.5", 0, "write a whole number"],
    ["-1", 6, "must not be negative"],
    ["-0.5", 6, "must not be negative"],
    ["1e-3", 6, "exponent notation"],
    ["2E5", 6, "exponent notation"],
    ["", 6, "is not a decimal number"],
    [".5", 6, "is not a decimal number"],
    ["5.", 6, "is not a decimal number"],
    ["1,000", 6, "is not a decimal number"],
    [" 1", 6, "is not a decimal number"],
    ["+1", 6, "is not a decimal number"],
    ["0x10", 6, "is not a decimal number"],
    ["1_000", 6, "is not a decimal number"],
    ["abc", 6, "is not a decimal number"],
    ["١", 6, "is not a decimal number"],
  ];
  for (const [text, decimals, reason] of cases) {
    test(`${JSON.stringify(text)} with ${decimals} decimals`, () => {
      const parsed = tryParseDecimalAmount(text, decimals);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.reason).toContain(reason);
      expect(() => parseDecimalAmount(text, decimals)).toThrow(RangeError);
    });
  }

  test("the suggested example has the token's precision", () => {
    const parsed = tryParseDecimalAmount("abc", 2);
    expect(parsed.ok ? "" : parsed.reason).toContain('e.g. "0.02"');
  });
});

describe("formatAmount", () => {
  const cases: [bigint, number, string][] = [
    [2000n, 6, "0.002"],
    [1n, 6, "0.000001"],
    [1000000n, 6, "1"],
    [1500000n, 6, "1.5"],
    [0n, 6, "0"],
    [42n, 0, "42"],
    [-2500n, 3, "-2.5"],
    [123456789012345678901234567890123456n, 6, "123456789012345678901234567890.123456"],
  ];
  for (const [units, decimals, text] of cases) {
    test(`${units} with ${decimals} decimals → ${text}`, () => {
      expect(formatAmount(units, decimals)).toBe(text);
    });
  }

  test("round-trips through parseDecimalAmount", () => {
    for (const units of [0n, 1n, 999999n, 1000000n, 10n ** 30n + 7n]) {
      expect(parseDecimalAmount(formatAmount(units, 6), 6)).toBe(units);
    }
  });
});
