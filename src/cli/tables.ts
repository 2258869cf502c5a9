/**
 * `arrow402 tables URL`: what a server sells — its tables, descriptions, columns and prices in
 * human units — from `GET /api/` and `GET /api/table/{name}`. A table whose metadata is paid is
 * shown from the discovery document, with what its metadata costs; nothing is ever paid here.
 * Amounts use verified decimals only (src/client/tokens.ts): built-in tokens, `--token-decimals`,
 * or the token contract read through `--rpc` / `ARROW402_RPC`; the server's own token claims only
 * raise warnings. Exit codes as for `arrow402 query` (src/cli/query.ts).
 */
import type { PaymentRequirements } from "@x402/core/types";
import { fetchDiscovery, fetchTable, type TableDocument, type TableFetch, type TableSummary } from "../client/discovery.ts";
import { describeMetadataPrice, describePriceTag, describeSummaryPricing, type TokenLookup } from "../client/prices.ts";
import { printable } from "../client/printable.ts";
import { claimsOfTags, type SellerClaim } from "../client/seller-claims.ts";
import { parseServerUrl } from "../client/server-url.ts";
import { suspiciousNotes } from "../client/token-notes.ts";
import { parseTokenSources, verifyTokens, type TokenRef, type TokenSources, type Verification } from "../client/token-verification.ts";
import { builtinToken, tokenKey, tokenView } from "../client/tokens.ts";
import { parse, UsageError } from "./args.ts";
import { EXIT } from "./query.ts";

const OPTIONS = {
  rpc: { type: "string", multiple: true },
  "token-decimals": { type: "string", multiple: true },
} as const;

export interface TablesArgs {
  url: string;
  rpc: string[];
  tokenDecimals: string[];
}

/** `arrow402 tables URL` from its command-line arguments; a UsageError for malformed ones. */
export function tablesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS, 1);
  const [url] = positionals;
  if (url === undefined) throw new UsageError("tables needs the server's URL: arrow402 tables URL");
  return tables({ url, rpc: values.rpc ?? [], tokenDecimals: values["token-decimals"] ?? [] });
}

export async function tables(args: TablesArgs, env: Record<string, string | undefined> = process.env): Promise<number> {
  const fail = (code: number, message: string) => {
    process.stderr.write(`${printable(`arrow402: ${message}`)}\n`);
    return code;
  };
  const server = parseServerUrl(args.url);
  if (!server.ok) return fail(EXIT.usage, server.reason);
  const sources = parseTokenSources(args.rpc, args.tokenDecimals, env);
  if (!sources.ok) return fail(EXIT.usage, sources.reason);
  const discovery = await fetchDiscovery(server.base);
  if (!discovery.ok) return fail(discovery.status !== null && discovery.status >= 500 ? EXIT.server : EXIT.runtime, discovery.reason);
  const { doc } = discovery;
  const listed: Listed[] = [];
  for (const summary of doc.tables) listed.push({ summary, fetched: await fetchTable(server.base, summary.name) });
  const knowledge = await learnTokens(listed, sources.sources);

  const lines = [`${server.base} — arrow402 ${doc.server.version}, ${doc.tables.length} table${doc.tables.length === 1 ? "" : "s"}`];
  for (const table of listed) lines.push("", ...describeTable(table, knowledge));
  console.log(lines.map(printable).join("\n"));
  return EXIT.ok;
}

interface Listed {
  summary: TableSummary;
  fetched: TableFetch;
}

interface TokenKnowledge {
  verified: ReadonlyMap<string, Verification>;
  claims: ReadonlyMap<string, SellerClaim>;
  lookup: TokenLookup;
}

/** Every token the listing names, verified once; the server's claims from its table documents. */
async function learnTokens(listed: readonly Listed[], sources: TokenSources): Promise<TokenKnowledge> {
  const verified = await verifyTokens(listed.flatMap(tokensOf), sources);
  const claims = new Map<string, SellerClaim>();
  for (const { fetched } of listed) if (fetched.kind === "doc") claimsOfTags(fetched.doc.price_tags, claims);
  const lookup: TokenLookup = (network, address) => {
    const verification = verified.get(tokenKey(network, address));
    return tokenView(network, address, verification?.ok ? verification.token : null);
  };
  return { verified, claims, lookup };
}

function tokensOf({ summary, fetched }: Listed): TokenRef[] {
  const refs = summary.pricing.map((entry) => ({ network: `eip155:${entry.chain}`, address: entry.token_address }));
  if (fetched.kind === "doc") refs.push(...fetched.doc.price_tags.map((tag) => ({ network: `eip155:${tag.token.chain}`, address: tag.token.address })));
  if (fetched.kind === "paid") refs.push(...fetched.required.accepts.map(offerToken));
  return refs;
}

function offerToken(offer: PaymentRequirements): TokenRef {
  return { network: offer.network, address: offer.asset };
}

function describeTable(table: Listed, knowledge: TokenKnowledge): string[] {
  const { summary, fetched } = table;
  const heading = `${summary.name}${summary.description ? ` — ${summary.description}` : ""}`;
  const notes = tokenNotes(tokensOf(table), knowledge);
  if (fetched.kind === "doc") return [heading, ...describeDocument(fetched.doc, knowledge.lookup), ...notes, ...describeColumns(fetched.doc)];
  const known = summary.requires_payment
    ? summary.pricing.map((entry) => `  price: ${describeSummaryPricing(entry, knowledge.lookup)}`)
    : ["  free to query"];
  if (fetched.kind === "paid") {
    return [heading, ...known, `  ${describeMetadataPrice(fetched.required.accepts, knowledge.lookup)}: columns are listed once it is paid`, ...notes];
  }
  return [heading, ...known, ...notes, `  columns unavailable: ${fetched.reason}`];
}

/** Once per token of a table: what is suspicious about it, and why its amounts are in smallest units. */
function tokenNotes(tokens: readonly TokenRef[], knowledge: TokenKnowledge): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const token of tokens) {
    const key = tokenKey(token.network, token.address);
    if (seen.has(key)) continue;
    seen.add(key);
    const verification = knowledge.verified.get(key);
    const claim = knowledge.claims.get(key);
    for (const note of suspiciousNotes(token, verification, claim)) lines.push(`  warning: suspicious: ${note}`);
    if (builtinToken(token.network, token.address) === null && verification !== undefined && !verification.ok) {
      lines.push(`  unverified, amounts in smallest units: ${verification.reason}`);
    }
  }
  return lines;
}

function describeDocument(doc: TableDocument, lookup: TokenLookup): string[] {
  const queryTags = doc.price_tags.filter((tag) => tag.pricing.model !== "MetadataPrice");
  const metadataTags = doc.price_tags.filter((tag) => tag.pricing.model === "MetadataPrice");
  const lines = queryTags.length === 0 ? ["  free to query"] : queryTags.map((tag) => `  price: ${describePriceTag(tag, lookup)}`);
  for (const tag of metadataTags) lines.push(`  ${describePriceTag(tag, lookup)}`);
  return lines;
}

function describeColumns(doc: TableDocument): string[] {
  // Made printable before they are measured, so that escapes keep the columns aligned.
  const fields = doc.schema.fields.map((field) => ({ ...field, name: printable(field.name), data_type: printable(field.data_type) }));
  const nameWidth = Math.max(0, ...fields.map((field) => field.name.length));
  const typeWidth = Math.max(0, ...fields.map((field) => field.data_type.length));
  const lines = [`  columns (${fields.length}):`];
  for (const field of fields) {
    const description = typeof field.metadata?.description === "string" ? field.metadata.description : "";
    const nullable = field.nullable === false ? "not null" : "";
    const parts = [field.name.padEnd(nameWidth), field.data_type.padEnd(typeWidth), nullable.padEnd(8), description];
    lines.push(`    ${parts.join("  ").trimEnd()}`);
  }
  return lines;
}
