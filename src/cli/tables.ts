/**
 * `arrow402 tables URL`: what a server sells — its tables, descriptions, columns and prices in
 * human units — from `GET /api/` and `GET /api/table/{name}`. A table whose metadata is paid is
 * shown from the discovery document, with what its metadata costs; nothing is ever paid here.
 * Exit codes as for `arrow402 query` (src/cli/query.ts).
 */
import { fetchDiscovery, fetchTable, type TableDocument, type TableSummary } from "../client/discovery.ts";
import { describeMetadataPrice, describePriceTag, describeSummaryPricing } from "../client/prices.ts";
import { parseServerUrl } from "../client/server-url.ts";
import { parse, UsageError } from "./args.ts";
import { EXIT } from "./query.ts";

/** `arrow402 tables URL` from its command-line arguments; a UsageError for malformed ones. */
export function tablesCommand(argv: string[]): Promise<number> {
  const [url] = parse(argv, {}, 1).positionals;
  if (url === undefined) throw new UsageError("tables needs the server's URL: arrow402 tables URL");
  return tables(url);
}

export async function tables(url: string): Promise<number> {
  const server = parseServerUrl(url);
  if (!server.ok) {
    process.stderr.write(`arrow402: ${server.reason}\n`);
    return EXIT.usage;
  }
  const discovery = await fetchDiscovery(server.base);
  if (!discovery.ok) {
    process.stderr.write(`arrow402: ${discovery.reason}\n`);
    return discovery.status !== null && discovery.status >= 500 ? EXIT.server : EXIT.runtime;
  }
  const { doc } = discovery;
  const lines = [`${server.base} — arrow402 ${doc.server.version}, ${doc.tables.length} table${doc.tables.length === 1 ? "" : "s"}`];
  for (const summary of doc.tables) {
    lines.push("", ...(await describeTable(server.base, summary)));
  }
  console.log(lines.join("\n"));
  return EXIT.ok;
}

async function describeTable(base: string, summary: TableSummary): Promise<string[]> {
  const heading = `${summary.name}${summary.description ? ` — ${summary.description}` : ""}`;
  const fetched = await fetchTable(base, summary.name);
  if (fetched.kind === "doc") return [heading, ...describeDocument(fetched.doc)];
  const known = summary.requires_payment
    ? summary.pricing.map((entry) => `  price: ${describeSummaryPricing(entry)}`)
    : ["  free to query"];
  if (fetched.kind === "paid") {
    return [heading, ...known, `  ${describeMetadataPrice(fetched.required.accepts)}: columns are listed once it is paid`];
  }
  return [heading, ...known, `  columns unavailable: ${fetched.reason}`];
}

function describeDocument(doc: TableDocument): string[] {
  const queryTags = doc.price_tags.filter((tag) => tag.pricing.model !== "MetadataPrice");
  const metadataTags = doc.price_tags.filter((tag) => tag.pricing.model === "MetadataPrice");
  const lines = queryTags.length === 0 ? ["  free to query"] : queryTags.map((tag) => `  price: ${describePriceTag(tag)}`);
  for (const tag of metadataTags) lines.push(`  ${describePriceTag(tag)}`);
  const fields = doc.schema.fields;
  const nameWidth = Math.max(0, ...fields.map((field) => field.name.length));
  const typeWidth = Math.max(0, ...fields.map((field) => field.data_type.length));
  lines.push(`  columns (${fields.length}):`);
  for (const field of fields) {
    const description = typeof field.metadata?.description === "string" ? field.metadata.description : "";
    const nullable = field.nullable === false ? "not null" : "";
    const parts = [field.name.padEnd(nameWidth), field.data_type.padEnd(typeWidth), nullable.padEnd(8), description];
    lines.push(`    ${parts.join("  ").trimEnd()}`);
  }
  return lines;
}
