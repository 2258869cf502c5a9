/** Price tags and tokens for the payment tests: plain data as the config loader resolves it. */
import type { FixedPriceTag, MetadataPriceTag, PerRowPriceTag, TokenInfo } from "../../src/config/types.ts";

export const PAY_TO = "0x1111111111111111111111111111111111111111" as const;
export const OTHER_PAY_TO = "0x2222222222222222222222222222222222222222" as const;

export const USDC_BASE_SEPOLIA: TokenInfo = {
  key: "usdc/base_sepolia",
  chainId: 84532,
  network: "eip155:84532",
  address: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  name: "USDC",
  version: "2",
  decimals: 6,
  networkLabel: "Base Sepolia",
  symbol: "USDC",
};

/** A token with 18 decimals, to check that offers in different tokens are compared by value. */
export const EIGHTEEN: TokenInfo = {
  key: "dai/base",
  chainId: 8453,
  network: "eip155:8453",
  address: "0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb",
  name: "Dai Stablecoin",
  version: "1",
  decimals: 18,
  networkLabel: "Base",
  symbol: "DAI",
};

export function perRow(amountPerItem: bigint, extra: Partial<PerRowPriceTag> = {}): PerRowPriceTag {
  return { type: "per_row", payTo: PAY_TO, token: USDC_BASE_SEPOLIA, amountPerItem, quote: "count", isDefault: false, ...extra } as PerRowPriceTag;
}

export function fixed(amount: bigint, extra: Partial<FixedPriceTag> = {}): FixedPriceTag {
  return { type: "fixed", payTo: PAY_TO, token: USDC_BASE_SEPOLIA, amount, isDefault: false, ...extra };
}

export function metadata(amount: bigint, extra: Partial<MetadataPriceTag> = {}): MetadataPriceTag {
  return { type: "metadata_price", payTo: PAY_TO, token: USDC_BASE_SEPOLIA, amount, ...extra };
}
