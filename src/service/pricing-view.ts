/**
 * JSON views of price tags for the discovery and table endpoints (spec "Resources";
 * ARCHITECTURE.md §3 fills the shapes the spec leaves open).
 */
import type { PriceTag } from "../config/types.ts";

/** Element of `tables[].pricing` in the discovery document; metadata tags are omitted on purpose. */
export function summaryPricing(tags: PriceTag[]): Record<string, string>[] {
  return tags.flatMap((tag): Record<string, string>[] => {
    const where = { token_address: tag.token.address, chain: String(tag.token.chainId), pay_to: tag.payTo };
    if (tag.type === "per_row") return [{ model: "PerRow", amount_per_item: String(tag.amountPerItem), quote: tag.quote, ...where }];
    if (tag.type === "fixed") return [{ model: "Fixed", amount: String(tag.amount), ...where }];
    return [];
  });
}

/** Element of `price_tags` on `GET /api/table/{name}`. */
export function priceTagView(tag: PriceTag) {
  return {
    pay_to: tag.payTo,
    pricing: pricingObject(tag),
    token: {
      chain: String(tag.token.chainId),
      address: tag.token.address,
      decimals: tag.token.decimals,
      transfer_method: "eip3009",
      // Beyond the spec's fields: lets a client print "0.002 tUSDC" for a token it does not know.
      symbol: tag.token.symbol,
    },
    is_default: tag.type === "metadata_price" ? false : tag.isDefault,
  };
}

function pricingObject(tag: PriceTag) {
  switch (tag.type) {
    case "per_row":
      return {
        model: "PerRow",
        amount_per_item: String(tag.amountPerItem),
        min_items: tag.minItems ?? null,
        max_items: tag.maxItems ?? null,
        min_total_amount: tag.minTotalAmount === undefined ? null : String(tag.minTotalAmount),
        // Beyond the spec's fields (DESIGN.md §17): "count" prices the rows returned, counted before
        // payment (the quote tells the count); "limit" prices the query's LIMIT.
        quote: tag.quote,
      };
    case "fixed":
      return { model: "Fixed", amount: String(tag.amount) };
    case "metadata_price":
      return { model: "MetadataPrice", amount: String(tag.amount) };
  }
}
