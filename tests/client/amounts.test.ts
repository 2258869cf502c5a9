/** Amounts in human units: built-in tokens by symbol, others by address, smallest units when unsure. */
import { describe, expect, test } from "bun:test";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import { formatPrice, formatTokenAmount, tokenView } from "../../src/client/tokens.ts";
import { describeMetadataPrice, describePriceTag, describeSummaryPricing } from "../../src/client/prices.ts";

const USDC = BUILTIN_TOKENS["usdc/base_sepolia"]!;
const OTHER = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

describe("token amounts", () => {
  test("a built-in token: symbol and network label, whatever the address's case", () => {
    const view = tokenView("eip155:84532", USDC.address.toLowerCase());
    expect(formatPrice(2000n, view)).toBe("0.002 USDC on Base Sepolia");
    expect(formatPrice(12_345_678n, tokenView("eip155:8453", BUILTIN_TOKENS["usdc/base"]!.address))).toBe("12.345678 USDC on Base");
  });

  test("a built-in address on another network is not that token", () => {
    expect(formatPrice(2000n, tokenView("eip155:1", USDC.address))).toBe(`2000 smallest units of token ${USDC.address} on eip155:1`);
  });

  test("another token: verified decimals and symbol when known, smallest units otherwise", () => {
    const six = { decimals: 6, symbol: null, source: "buyer" } as const;
    expect(formatTokenAmount(1200n, tokenView("eip155:31337", OTHER, six))).toBe(`0.0012 of token ${OTHER}`);
    const contract = { decimals: 18, symbol: "WETH", source: "contract" } as const;
    expect(formatTokenAmount(10n ** 18n + 5n, tokenView("eip155:31337", OTHER, contract))).toBe("1.000000000000000005 WETH");
    expect(formatPrice(1200n, tokenView("eip155:31337", OTHER))).toBe(`1200 smallest units of token ${OTHER} on eip155:31337`);
  });

  test("verified facts never override a built-in token", () => {
    const lie = { decimals: 18, symbol: "DAI", source: "buyer" } as const;
    expect(formatPrice(2000n, tokenView("eip155:84532", USDC.address, lie))).toBe("0.002 USDC on Base Sepolia");
  });
});

describe("price tags", () => {
  const token = { chain: "84532", address: USDC.address, decimals: 6, transfer_method: "eip3009" };
  const payTo = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";

  test("per row, with tiers and a minimum", () => {
    const tag = {
      pay_to: payTo,
      token,
      is_default: true,
      pricing: { model: "PerRow", amount_per_item: "2000", min_items: 100, max_items: null, min_total_amount: "500000" },
    };
    expect(describePriceTag(tag)).toBe(`0.002 USDC per row on Base Sepolia (for 100 rows or more, at least 0.5 USDC per query) [default], paid to ${payTo}`);
    const bounded = { ...tag, is_default: false, pricing: { ...tag.pricing, max_items: 1000, min_total_amount: null } };
    expect(describePriceTag(bounded)).toBe(`0.002 USDC per row on Base Sepolia (for 100 to 1000 rows), paid to ${payTo}`);
  });

  test("fixed and metadata prices; another token only in the decimals the buyer verified", () => {
    expect(describePriceTag({ pay_to: payTo, token, pricing: { model: "Fixed", amount: "1000000" } })).toBe(`1 USDC per query on Base Sepolia, paid to ${payTo}`);
    // The server claims 6 decimals and a symbol: neither is used.
    const other = { chain: "31337", address: OTHER, decimals: 6, symbol: "USDC" };
    const tag = { pay_to: payTo, token: other, pricing: { model: "MetadataPrice", amount: "10000" } };
    expect(describePriceTag(tag)).toBe(`metadata: 10000 smallest units of token ${OTHER} on eip155:31337, paid to ${payTo}`);
    const verified = (network: string, address: string) => tokenView(network, address, { decimals: 4, symbol: null, source: "contract" });
    expect(describePriceTag(tag, verified)).toBe(`metadata: 1 of token ${OTHER} on eip155:31337, paid to ${payTo}`);
  });

  test("discovery summaries and metadata quotes", () => {
    const entry = { model: "PerRow", amount_per_item: "1000", token_address: USDC.address, chain: "84532", pay_to: payTo };
    expect(describeSummaryPricing(entry)).toBe(`0.001 USDC per row on Base Sepolia, paid to ${payTo}`);
    const offer = { scheme: "exact", network: "eip155:84532" as const, amount: "10000", asset: USDC.address, payTo, maxTimeoutSeconds: 300, extra: {} };
    expect(describeMetadataPrice([offer])).toBe("metadata costs 0.01 USDC on Base Sepolia");
  });
});
