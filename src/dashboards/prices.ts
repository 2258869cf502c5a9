/**
 * Price tags in human words for the landing page and the "get the full data" panel:
 * "0.002 USDC per row on Base Sepolia", "1.00 USDC per query on Base", "Free".
 * Amounts are formatted from exact smallest units (ARCHITECTURE.md §2), never through floats.
 */
import { formatAmount } from "../config/amounts.ts";
import type { PriceTag, TableConfig, TokenInfo } from "../config/types.ts";
import { queriesArePaid } from "../payment/terms.ts";

/** Money reads best with at least two decimals ("1.00", "0.50"); more are kept as they are. */
export function formatTokenAmount(units: bigint, token: TokenInfo): string {
  const text = formatAmount(units, token.decimals);
  if (token.decimals < 2) return `${text} ${token.symbol}`;
  const [whole, fraction = ""] = text.split(".");
  return `${whole}.${fraction.padEnd(2, "0")} ${token.symbol}`;
}

function rows(n: number): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? "row" : "rows"}`;
}

export function describePriceTag(tag: PriceTag): string {
  const on = `on ${tag.token.networkLabel}`;
  switch (tag.type) {
    case "per_row": {
      const parts = [`${formatTokenAmount(tag.amountPerItem, tag.token)} per row ${on}`];
      if (tag.minItems !== undefined && tag.maxItems !== undefined) {
        parts.push(`for results of ${rows(tag.minItems)} to ${rows(tag.maxItems)}`);
      } else if (tag.minItems !== undefined) {
        parts.push(`for results of ${rows(tag.minItems)} or more`);
      } else if (tag.maxItems !== undefined) {
        parts.push(`for results of up to ${rows(tag.maxItems)}`);
      }
      if (tag.minTotalAmount !== undefined) parts.push(`minimum ${formatTokenAmount(tag.minTotalAmount, tag.token)}`);
      if (tag.quote === "limit") parts.push("priced by the query's LIMIT");
      return parts.join(", ");
    }
    case "fixed":
      return `${formatTokenAmount(tag.amount, tag.token)} per query ${on}`;
    case "metadata_price":
      return `${formatTokenAmount(tag.amount, tag.token)} for the table's metadata ${on}`;
  }
}


/** One line per price tag; a table whose queries are free says so first. */
export function describeTablePrices(table: TableConfig): string[] {
  const lines = table.priceTags.map(describePriceTag);
  return queriesArePaid(table.priceTags) ? lines : ["Free queries", ...lines];
}
