/**
 * Price tags in human units for `arrow402 tables` ("0.002 USDC per row on Base Sepolia"). Amounts
 * on the wire are smallest units (ARCHITECTURE.md §2). Which decimals and symbol a token has is the
 * caller's verified knowledge (`TokenLookup`), never the server's `token.decimals` or
 * `token.symbol`: without it, built-in tokens are exact and others are shown in smallest units.
 */
import type { PaymentRequirements } from "@x402/core/types";
import type { PriceTagDocument, SummaryPricingDoc } from "./discovery.ts";
import { formatPrice, formatTokenAmount, tokenView, type TokenView } from "./tokens.ts";

/** The buyer's view of the token at a network and address. */
export type TokenLookup = (network: string, address: string) => TokenView;

const builtinOnly: TokenLookup = (network, address) => tokenView(network, address);

/** One price tag of `GET /api/table/{name}`. */
export function describePriceTag(tag: PriceTagDocument, lookup: TokenLookup = builtinOnly): string {
  const token = lookup(`eip155:${tag.token.chain}`, tag.token.address);
  const { pricing } = tag;
  const main = describeModel(pricing.model, pricing.amount_per_item ?? null, pricing.amount ?? null, token);
  const conditions = [
    rowRange(pricing.min_items ?? null, pricing.max_items ?? null),
    isUnits(pricing.min_total_amount) ? `at least ${formatTokenAmount(BigInt(pricing.min_total_amount), token)} per query` : null,
  ].filter((part): part is string => part !== null);
  const suffix = conditions.length > 0 ? ` (${conditions.join(", ")})` : "";
  return `${main}${suffix}${tag.is_default ? " [default]" : ""}, paid to ${tag.pay_to}`;
}

/** One `pricing` entry of the discovery document. */
export function describeSummaryPricing(entry: SummaryPricingDoc, lookup: TokenLookup = builtinOnly): string {
  const token = lookup(`eip155:${entry.chain}`, entry.token_address);
  return `${describeModel(entry.model, entry.amount_per_item ?? null, entry.amount ?? null, token)}, paid to ${entry.pay_to}`;
}

/** "metadata costs 0.01 USDC on Base Sepolia" from the 402 of a table endpoint. */
export function describeMetadataPrice(offers: readonly PaymentRequirements[], lookup: TokenLookup = builtinOnly): string {
  const prices = offers.map((offer) => formatPrice(BigInt(offer.amount), lookup(offer.network, offer.asset)));
  return prices.length === 0 ? "metadata is paid" : `metadata costs ${prices.join(" or ")}`;
}

function describeModel(model: string, perItem: string | null, amount: string | null, token: TokenView): string {
  if (model === "PerRow" && isUnits(perItem)) return `${formatTokenAmount(BigInt(perItem), token)} per row on ${token.networkLabel}`;
  if (model === "Fixed" && isUnits(amount)) return `${formatTokenAmount(BigInt(amount), token)} per query on ${token.networkLabel}`;
  if (model === "MetadataPrice" && isUnits(amount)) return `metadata: ${formatTokenAmount(BigInt(amount), token)} on ${token.networkLabel}`;
  return `${model} pricing (${perItem ?? amount ?? "no amount"} smallest units of token ${token.address} on ${token.networkLabel})`;
}

function rowRange(min: number | null, max: number | null): string | null {
  if (min !== null && max !== null) return `for ${min} to ${max} rows`;
  if (min !== null) return `for ${min} rows or more`;
  if (max !== null) return `for up to ${max} rows`;
  return null;
}

function isUnits(text: string | null | undefined): text is string {
  return typeof text === "string" && /^[0-9]{1,78}$/.test(text);
}
