import { expect, test } from "bun:test";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import type { PriceTag, TableConfig } from "../../src/config/types.ts";
import { describePriceTag, describeTablePrices, formatTokenAmount } from "../../src/dashboards/prices.ts";

const base = BUILTIN_TOKENS["usdc/base"]!;
const sepolia = BUILTIN_TOKENS["usdc/base_sepolia"]!;
const payTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" as const;

test("amounts are exact, with at least two decimals", () => {
  expect(formatTokenAmount(2000n, sepolia)).toBe("0.002 USDC");
  expect(formatTokenAmount(1_000_000n, base)).toBe("1.00 USDC");
  expect(formatTokenAmount(500_000n, base)).toBe("0.50 USDC");
  expect(formatTokenAmount(123_456_789_012_345_678n, base)).toBe("123456789012.345678 USDC");
  expect(formatTokenAmount(0n, base)).toBe("0.00 USDC");
});

test("each kind of price tag reads as a sentence", () => {
  const tags: [PriceTag, string][] = [
    [{ type: "per_row", payTo, token: sepolia, amountPerItem: 2000n, quote: "count", isDefault: true }, "0.002 USDC per row on Base Sepolia"],
    [
      { type: "per_row", payTo, token: sepolia, amountPerItem: 1000n, quote: "count", minItems: 100, maxItems: 5000, minTotalAmount: 100_000n, isDefault: false },
      "0.001 USDC per row on Base Sepolia, for results of 100 rows to 5,000 rows, minimum 0.10 USDC",
    ],
    [{ type: "per_row", payTo, token: sepolia, amountPerItem: 1000n, quote: "count", minItems: 1, isDefault: false }, "0.001 USDC per row on Base Sepolia, for results of 1 row or more"],
    [{ type: "fixed", payTo, token: base, amount: 1_000_000n, isDefault: false }, "1.00 USDC per query on Base"],
    [{ type: "metadata_price", payTo, token: base, amount: 10_000n }, "0.01 USDC for the table's metadata on Base"],
  ];
  for (const [tag, text] of tags) expect(describePriceTag(tag)).toBe(text);
});

test("a table says whether its queries are free", () => {
  const table = (priceTags: PriceTag[]): TableConfig => ({ name: "t", database: "main", source: "t", description: "", columns: {}, priceTags });
  expect(describeTablePrices(table([]))).toEqual(["Free queries"]);
  expect(describeTablePrices(table([{ type: "metadata_price", payTo, token: base, amount: 10_000n }]))).toEqual([
    "Free queries",
    "0.01 USDC for the table's metadata on Base",
  ]);
  expect(describeTablePrices(table([{ type: "fixed", payTo, token: base, amount: 1_000_000n, isDefault: true }]))).toEqual(["1.00 USDC per query on Base"]);
});
