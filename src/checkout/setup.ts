/**
 * Builds a checkout's setup from the config (ARCHITECTURE.md §15): the formats of the registry, the
 * tokens of the config (their decimals turn an offer's smallest units into token units) and, for the
 * built-in networks only, the block explorer a receipt links to. A custom token's chain (a devnet)
 * has no explorer: its receipt shows the transaction hash alone.
 */
import type { Config } from "../config/types.ts";
import { FORMATS, type FormatName } from "../formats/registry.ts";
import type { CheckoutFormat, CheckoutSetup, CheckoutToken } from "./setup-types.ts";

/** Transaction pages of the built-in networks (config/tokens.ts BUILTIN_TOKENS), by chain id. */
export const EXPLORER_TX: Readonly<Record<number, string>> = Object.freeze({
  8453: "https://basescan.org/tx/",
  84532: "https://sepolia.basescan.org/tx/",
  43114: "https://snowtrace.io/tx/",
  43113: "https://testnet.snowtrace.io/tx/",
  137: "https://polygonscan.com/tx/",
  80002: "https://amoy.polygonscan.com/tx/",
});

/** What the Format select says of each format. */
const FORMAT_LABELS: Readonly<Record<FormatName, string>> = {
  arrow: "Apache Arrow IPC stream",
  csv: "CSV",
  json: "JSON (array of rows)",
  ndjson: "NDJSON (one row per line)",
  parquet: "Apache Parquet",
};

export function checkoutFormats(): CheckoutFormat[] {
  return FORMATS.map((f) => ({ name: f.name, mediaType: f.mediaType, extension: f.extension, label: FORMAT_LABELS[f.name] }));
}

export function checkoutTokens(config: Pick<Config, "tokens">): CheckoutToken[] {
  return Object.values(config.tokens).map((token) => {
    const explorer = Object.hasOwn(EXPLORER_TX, token.chainId) ? EXPLORER_TX[token.chainId] : undefined;
    return {
      network: token.network,
      asset: token.address,
      symbol: token.symbol,
      decimals: token.decimals,
      networkLabel: token.networkLabel,
      ...(explorer === undefined ? {} : { explorerTx: explorer }),
    };
  });
}

/** The checkout of a query: `sql` prefilled, `format` selected. */
export function queryCheckout(config: Pick<Config, "tokens">, table: string, sql: string, format: FormatName = "arrow"): CheckoutSetup {
  return { kind: "query", table, sql, path: "/api/query", formats: checkoutFormats(), format, tokens: checkoutTokens(config) };
}

/** The checkout of a table's description (`GET /api/table/{name}` with a metadata price). */
export function tableCheckout(config: Pick<Config, "tokens">, table: string): CheckoutSetup {
  const json = checkoutFormats().filter((f) => f.name === "json");
  return { kind: "table", table, sql: "", path: `/api/table/${encodeURIComponent(table)}`, formats: json, format: "json", tokens: checkoutTokens(config) };
}
