/**
 * What a server says about the tokens it prices in: `price_tags[].token.decimals` and `.symbol`
 * of its table endpoint (`GET /api/table/{name}`). These are claims, never facts: the client uses
 * them only to warn when they disagree with what it knows or imitate a known token
 * (token-notes.ts). Fetched best effort, from free table documents only.
 */
import { fetchDiscovery, fetchTable, type PriceTagDocument } from "./discovery.ts";
import type { TokenRef } from "./token-verification.ts";
import { builtinToken, tokenKey } from "./tokens.ts";

/** A hostile server may list endless tables: claims are only worth a few requests. */
const MAX_TABLES_ASKED = 10;

export interface SellerClaim {
  decimals: number;
  symbol: string | null;
}

/** The claims of price tags, by tokenKey (the first tag naming a token speaks for it). */
export function claimsOfTags(tags: readonly PriceTagDocument[], into = new Map<string, SellerClaim>()): Map<string, SellerClaim> {
  for (const tag of tags) {
    const key = tokenKey(`eip155:${tag.token.chain}`, tag.token.address);
    if (!into.has(key)) into.set(key, { decimals: tag.token.decimals, symbol: tag.token.symbol ?? null });
  }
  return into;
}

/** The server's claims about the given tokens that are not built in, from the tables priced in them. */
export async function fetchSellerClaims(base: string, tokens: readonly TokenRef[]): Promise<Map<string, SellerClaim>> {
  const found = new Map<string, SellerClaim>();
  const wanted = new Set(tokens.filter((token) => builtinToken(token.network, token.address) === null).map((token) => tokenKey(token.network, token.address)));
  if (wanted.size === 0) return found;
  const discovery = await fetchDiscovery(base);
  if (!discovery.ok) return found;
  const tables = discovery.doc.tables
    .filter((table) => table.pricing.some((entry) => wanted.has(tokenKey(`eip155:${entry.chain}`, entry.token_address))))
    .slice(0, MAX_TABLES_ASKED);
  for (const table of tables) {
    const fetched = await fetchTable(base, table.name);
    if (fetched.kind !== "doc") continue;
    claimsOfTags(fetched.doc.price_tags.filter((tag) => wanted.has(tokenKey(`eip155:${tag.token.chain}`, tag.token.address))), found);
    if ([...wanted].every((key) => found.has(key))) break;
  }
  return found;
}
