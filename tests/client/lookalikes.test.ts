/** Symbols that imitate a built-in token, and text from the network made safe to print. */
import { describe, expect, test } from "bun:test";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";
import { imitation } from "../../src/client/lookalikes.ts";
import { printable, quoted } from "../../src/client/printable.ts";
import { displaySymbol } from "../../src/client/token-verification.ts";

const USDC = BUILTIN_TOKENS["usdc/base_sepolia"]!;
const OTHER = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

describe("imitation", () => {
  test.each([
    ["USDC", "exact"],
    ["usdc", "lower case"],
    ["UsDc", "mixed case"],
    ["USDС", "Cyrillic Es"],
    ["ՍЅDС", "Armenian/Cyrillic letters"],
    ["ＵＳＤＣ", "full-width"],
    ["𝐔𝐒𝐃𝐂", "mathematical bold"],
    ["U.S.D.C", "dots"],
    ["U S D C", "spaces"],
    ["U\u200bSDC", "a zero-width space"],
    ["U5DC", "a digit for S"],
  ])("%s (%s) on another token imitates USDC", (symbol) => {
    expect(imitation(symbol, "eip155:31337", OTHER)).toEqual({ symbol: "USDC", real: "this client knows no USDC on eip155:31337" });
    expect(imitation(symbol, USDC.network, OTHER)).toEqual({ symbol: "USDC", real: `USDC on Base Sepolia is ${USDC.address}` });
  });

  test.each(["tUSDC", "USDC.e", "USDT", "DAI", "USD Coin Bridged", "WETH", ""])("%s imitates nothing built in", (symbol) => {
    expect(imitation(symbol, USDC.network, OTHER)).toBeNull();
  });

  test("the real USDC is no imitation, at its address in any letter case; the same address on another chain is", () => {
    expect(imitation("USDC", USDC.network, USDC.address)).toBeNull();
    expect(imitation("usdc", USDC.network, USDC.address.toLowerCase())).toBeNull();
    expect(imitation("USDC", "eip155:1", USDC.address)).not.toBeNull();
  });
});

describe("symbols shown beside amounts", () => {
  test.each([
    ["tUSDC", "tUSDC"],
    ["WETH", "WETH"],
    ["USDC.e", "USDC.e"],
    ["USDC", null],
    ["USDС", null],
    ["A\u001b[2KB", null],
    ["twenty-one-characters", null],
    [null, null],
  ])("a contract's %p is shown as %p", (symbol, shown) => {
    expect(displaySymbol(symbol, "eip155:31337", OTHER)).toBe(shown);
  });
});

describe("printable", () => {
  test("control characters and bidirectional overrides become visible escapes", () => {
    expect(printable("0.05 USDC\u001b[2K\rPaid")).toBe("0.05 USDC\\u{1b}[2K\\u{d}Paid");
    expect(printable("abc\u202edef")).toBe("abc\\u{202e}def");
    expect(printable("USDС ünïcode")).toBe("USDС ünïcode");
  });

  test("quoted cuts long text", () => {
    expect(quoted("USDC")).toBe('"USDC"');
    expect(quoted("x".repeat(50), 4)).toBe('"xxxx…"');
  });
});
