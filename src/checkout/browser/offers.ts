/**
 * A 402's offers as the buyer reads them (ARCHITECTURE.md §15): the amount in token units (the
 * offer carries smallest units; the setup's tokens know the decimals), the rows the quote is for
 * (the description's ` - N rows` or ` - up to N rows`, ARCHITECTURE.md §6), the network by name and
 * the recipient.
 */
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import type { CheckoutToken } from "../setup-types.ts";

export interface OfferView {
  requirement: PaymentRequirements;
  /** "0.2 tUSDC", or the smallest units and the asset when the token is not one of the config's. */
  price: string;
  network: string;
  chainId: number;
  token: CheckoutToken | undefined;
}

export interface Quote {
  required: PaymentRequired;
  /** "200 rows", "up to 100 rows", or null when the price does not depend on rows. */
  rows: string | null;
  offers: OfferView[];
}

/** `amount` smallest units as token units: 200000 with 6 decimals → "0.2". */
export function tokenUnits(amount: string, decimals: number): string {
  const value = BigInt(amount);
  const base = 10n ** BigInt(decimals);
  const fraction = (value % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return fraction === "" ? (value / base).toString() : `${value / base}.${fraction}`;
}

function chainIdOf(network: string): number {
  const match = /^eip155:(\d+)$/.exec(network);
  return match ? Number(match[1]) : Number.NaN;
}

export function tokenOf(tokens: readonly CheckoutToken[], requirement: Pick<PaymentRequirements, "network" | "asset">): CheckoutToken | undefined {
  return tokens.find((t) => t.network === requirement.network && t.asset.toLowerCase() === requirement.asset.toLowerCase());
}

export function describeOffer(tokens: readonly CheckoutToken[], requirement: PaymentRequirements): OfferView {
  const token = tokenOf(tokens, requirement);
  const chainId = chainIdOf(requirement.network);
  return {
    requirement,
    price: token ? `${tokenUnits(requirement.amount, token.decimals)} ${token.symbol}` : `${requirement.amount} smallest units of token ${requirement.asset}`,
    network: token ? token.networkLabel : `chain ${chainId}`,
    chainId,
    token,
  };
}

export function rowsOf(description: string | undefined): string | null {
  const match = / - (up to )?(\d+) rows$/.exec(description ?? "");
  if (!match) return null;
  const rows = Number(match[2]).toLocaleString("en-US");
  return match[1] ? `up to ${rows} rows` : `${rows} ${match[2] === "1" ? "row" : "rows"}`;
}

export function readQuote(tokens: readonly CheckoutToken[], required: PaymentRequired): Quote {
  return {
    required,
    rows: rowsOf(required.resource?.description),
    offers: required.accepts.filter((a) => a.scheme === "exact" && a.network.startsWith("eip155:")).map((a) => describeOffer(tokens, a)),
  };
}

/** Whether the server still offers `requirement` exactly (same amount, recipient, token, network). */
export function stillOffered(required: PaymentRequired, requirement: PaymentRequirements): boolean {
  const same = JSON.stringify(requirement);
  return required.accepts.some((a) => JSON.stringify(a) === same);
}
