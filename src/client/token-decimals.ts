/**
 * Decimals of tokens that are not built in (a 402 names only network and address). The server's
 * table endpoint tells them (`price_tags[].token.decimals`): the tables whose discovery pricing
 * names the token are asked, free metadata only. Best effort: a token still unknown afterwards is
 * shown in smallest units and never paid under a decimal budget.
 */
import { fetchDiscovery, fetchTable } from "./discovery.ts";
import type { Offer } from "./offers.ts";
import { tokenKey, type TokenFacts } from "./tokens.ts";

export async function lookupTokenDecimals(base: string, offers: readonly Offer[]): Promise<Map<string, TokenFacts>> {
  const found = new Map<string, TokenFacts>();
  const wanted = new Set(offers.filter((offer) => offer.token.decimals === null).map((offer) => tokenKey(offer.token.network, offer.token.address)));
  if (wanted.size === 0) return found;
  const discovery = await fetchDiscovery(base);
  if (!discovery.ok) return found;
  const tables = discovery.doc.tables.filter((table) =>
    table.pricing.some((entry) => wanted.has(tokenKey(`eip155:${entry.chain}`, entry.token_address))),
  );
  for (const table of tables) {
    const fetched = await fetchTable(base, table.name);
    if (fetched.kind !== "doc") continue;
    for (const tag of fetched.doc.price_tags) {
      const key = tokenKey(`eip155:${tag.token.chain}`, tag.token.address);
      if (wanted.has(key)) found.set(key, { decimals: tag.token.decimals, symbol: tag.token.symbol ?? null });
    }
    if ([...wanted].every((key) => found.has(key))) break;
  }
  return found;
}
