/**
 * Tokens a price tag can name (ARCHITECTURE.md §2): the built-in USDC deployments, plus custom entries
 * from the config's `tokens:` section (a local devnet token, another stablecoin…). Every token here
 * supports EIP-3009 `transferWithAuthorization`; `name`/`version` are its EIP-712 domain, sent in
 * the `extra` of every offer, so they must match the contract exactly or signatures will not verify.
 */
import { getAddress } from "viem";
import type { Hex, TokenInfo } from "./types.ts";

function usdc(key: string, chainId: number, address: string, name: string, networkLabel: string): TokenInfo {
  return Object.freeze({
    key,
    chainId,
    network: `eip155:${chainId}`,
    address: getAddress(address),
    name,
    version: "2",
    decimals: 6,
    networkLabel,
    symbol: "USDC",
  });
}

/** The USDC deployments of ARCHITECTURE.md §2, by config key. Names differ per chain, as deployed. */
export const BUILTIN_TOKENS: Record<string, TokenInfo> = Object.freeze({
  "usdc/base": usdc("usdc/base", 8453, "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "USD Coin", "Base"),
  "usdc/base_sepolia": usdc("usdc/base_sepolia", 84532, "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", "Base Sepolia"),
  "usdc/avalanche": usdc("usdc/avalanche", 43114, "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E", "USD Coin", "Avalanche"),
  "usdc/avalanche_fuji": usdc("usdc/avalanche_fuji", 43113, "0x5425890298aed601595a70AB815c96711a31Bc65", "USD Coin", "Avalanche Fuji"),
  "usdc/polygon": usdc("usdc/polygon", 137, "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", "USD Coin", "Polygon"),
  "usdc/polygon_amoy": usdc("usdc/polygon_amoy", 80002, "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582", "USDC", "Polygon Amoy"),
});

/** Default symbol of a custom token: the key's part before '/', uppercased (`usdc/devnet` → `USDC`). */
export function defaultSymbol(key: string): string {
  return (key.split("/")[0] ?? key).toUpperCase();
}

export function customToken(
  key: string,
  entry: { chainId: number; address: Hex; name: string; version: string; decimals: number; symbol?: string; networkLabel?: string },
): TokenInfo {
  return {
    key,
    chainId: entry.chainId,
    network: `eip155:${entry.chainId}`,
    address: entry.address,
    name: entry.name,
    version: entry.version,
    decimals: entry.decimals,
    networkLabel: entry.networkLabel ?? `chain ${entry.chainId}`,
    symbol: entry.symbol ?? defaultSymbol(key),
  };
}
