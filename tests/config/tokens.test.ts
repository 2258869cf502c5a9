import { describe, expect, test } from "bun:test";
import { getAddress } from "viem";
import { BUILTIN_TOKENS } from "../../src/config/tokens.ts";

// The table of ARCHITECTURE.md §2, written out independently of the implementation.
const EXPECTED: [string, number, string, string, string][] = [
  ["usdc/base", 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin", "Base"],
  ["usdc/base_sepolia", 84532, "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", "Base Sepolia"],
  ["usdc/avalanche", 43114, "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "USD Coin", "Avalanche"],
  ["usdc/avalanche_fuji", 43113, "0x5425890298aed601595a70AB815c96711a31Bc65", "USD Coin", "Avalanche Fuji"],
  ["usdc/polygon", 137, "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "USD Coin", "Polygon"],
  ["usdc/polygon_amoy", 80002, "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582", "USDC", "Polygon Amoy"],
];

describe("BUILTIN_TOKENS", () => {
  test("has exactly the six USDC deployments", () => {
    expect(Object.keys(BUILTIN_TOKENS).sort()).toEqual(EXPECTED.map(([key]) => key).sort());
  });

  for (const [key, chainId, address, name, label] of EXPECTED) {
    test(key, () => {
      expect(BUILTIN_TOKENS[key]).toEqual({
        key,
        chainId,
        network: `eip155:${chainId}`,
        address: getAddress(address) as `0x${string}`,
        name,
        version: "2",
        decimals: 6,
        networkLabel: label,
        symbol: "USDC",
      });
      expect(BUILTIN_TOKENS[key]?.address).toBe(address as `0x${string}`);
    });
  }

  test("cannot be changed by a caller", () => {
    expect(() => {
      (BUILTIN_TOKENS as Record<string, unknown>)["usdc/x"] = {};
    }).toThrow();
    expect(() => {
      (BUILTIN_TOKENS["usdc/base"] as { decimals: number }).decimals = 18;
    }).toThrow();
  });
});
