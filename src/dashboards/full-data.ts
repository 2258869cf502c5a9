/**
 * The "get the full data" panel of a dashboard: the table's price in human units and ready
 * commands for the query endpoint (ARCHITECTURE.md §4, §6) in every format it serves, compressed
 * (§13), and how to reach the same data from an MCP client (§12). Commands are quoted for a POSIX
 * shell, the MCP snippet is written by JSON.stringify, and everything goes through escapeHtml:
 * the SQL, the table's name and the base URL come from the config. First comes "Buy here", the
 * checkout that pays with the wallet in the browser (checkout/panel.ts, ARCHITECTURE.md §15).
 */
import type { TableInfo } from "../catalog.ts";
import { renderCheckout } from "../checkout/panel.ts";
import { queryCheckout } from "../checkout/setup.ts";
import type { Config } from "../config/types.ts";
import { FORMATS, type FormatName } from "../formats/registry.ts";
import { escapeHtml } from "./html.ts";
import { queriesArePaid } from "../payment/terms.ts";
import { describeTablePrices } from "./prices.ts";
import { quoteIdentifier, timeColumnOf } from "./snapshot.ts";

export interface FullDataOptions {
  /** The server's public URL (server.base_url). */
  baseUrl: string;
  /** The dashboard's snapshot is a sample rather than the whole table. */
  sampled: boolean;
  /** limits.mcp_max_rows: the most rows one MCP `query` call returns. */
  mcpMaxRows: number;
  /** The config's tokens, for the "Buy here" checkout (ARCHITECTURE.md §15); without them, no checkout. */
  tokens?: Config["tokens"];
}

const BARE_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How the formats table names each format (the registry holds the media types). */
const FORMAT_LABELS: Readonly<Record<FormatName, string>> = {
  arrow: "Apache Arrow IPC stream (the default)",
  csv: "CSV, with a header line",
  json: "JSON, an array of row objects",
  ndjson: "NDJSON, one row object per line",
  parquet: "Apache Parquet",
};

function sqlIdentifier(name: string): string {
  return BARE_IDENTIFIER.test(name) ? name : quoteIdentifier(name);
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function code(text: string): string {
  return `<pre><code>${escapeHtml(text)}</code></pre>`;
}

export function exampleQuery(table: TableInfo): string {
  const time = timeColumnOf(table);
  const order = time ? ` ORDER BY ${sqlIdentifier(time.name)} DESC` : "";
  return `SELECT * FROM ${sqlIdentifier(table.name)}${order} LIMIT 100`;
}

function curl(base: string, sql: string, file: string, accept?: string): string {
  const lines = [`curl -sS --compressed -G ${shellQuote(`${base}/api/query`)}`];
  if (accept !== undefined) lines.push(`-H ${shellQuote(`Accept: ${accept}`)}`);
  lines.push(`--data-urlencode ${shellQuote(`query=${sql}`)}`, `-o ${shellQuote(file)}`);
  return lines.join(" \\\n  ");
}

function formatsTable(): string {
  const rows = FORMATS.map(
    (format) =>
      `<tr><th scope="row">${escapeHtml(FORMAT_LABELS[format.name])}</th><td><code>Accept: ${escapeHtml(format.mediaType)}</code></td>` +
      `<td><code>format=${escapeHtml(format.name)}</code></td></tr>`,
  );
  return `<div class="table-scroll"><table class="formats">
<caption>Every format has the same rows and the same price; ask with the header, or with the query parameter where a client cannot set headers</caption>
<thead><tr><th scope="col">Format</th><th scope="col">Header</th><th scope="col">Query parameter</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table></div>`;
}

function mcpSection(base: string, maxRows: number, paid: boolean): string {
  const url = `${base}/mcp`;
  const config = JSON.stringify({ mcpServers: { arrow402: { url } } }, null, 2);
  const payment = paid
    ? ` A paid query answers with the x402 <code>PaymentRequired</code> for its exact price; an agent with an x402 client signs it and calls again with the payment in <code>_meta[&quot;x402/payment&quot;]</code>.`
    : "";
  return `<h3>For AI agents (MCP)</h3>
<p>The same tables and prices over MCP (Streamable HTTP) at <code>${escapeHtml(url)}</code>: the tools <code>list_tables</code>, <code>describe_table</code> and <code>query</code>, which returns at most ${escapeHtml(maxRows.toLocaleString("en-US"))} rows per call; larger results come from the query endpoint above.${payment} Add it to your MCP client's configuration:</p>
${code(config)}
<p class="muted">With Claude Code: <code>${escapeHtml(`claude mcp add --transport http arrow402 ${shellQuote(url)}`)}</code></p>`;
}

export function renderFullDataPanel(table: TableInfo, options: FullDataOptions): string {
  const base = options.baseUrl.replace(/\/+$/, "");
  const sql = exampleQuery(table);
  const stem = table.name.replace(/[^A-Za-z0-9_-]+/g, "_") || "result";
  const cli = [
    `arrow402 query ${shellQuote(base)} ${shellQuote(sql)}`,
    `arrow402 query ${shellQuote(base)} ${shellQuote(sql)} --format parquet --output ${shellQuote(`${stem}.parquet`)}`,
  ].join("\n");
  const prices = describeTablePrices(table.config);
  const paid = queriesArePaid(table.config.priceTags);
  const priceHtml =
    prices.length === 0
      ? `<p><strong>Free:</strong> queries on this table need no payment.</p>`
      : `<ul class="price-list">${prices.map((p) => `<li>${escapeHtml(p)}</li>`).join("")}</ul>`;
  const cliNote = paid
    ? `<p class="muted">It shows the quote and pays only what you accept, under <code>--max-amount</code> (in token units) or at its prompt, signing with the key in <code>ARROW402_PRIVATE_KEY</code>. The first command prints a table; <code>--format</code> also takes <code>csv</code>, <code>json</code>, <code>ndjson</code> and <code>arrow</code>.</p>`
    : `<p class="muted">The first command prints a table; <code>--format</code> also takes <code>csv</code>, <code>json</code>, <code>ndjson</code> and <code>arrow</code>.</p>`;
  const curlNote = paid
    ? `<p class="muted">Without payment the query endpoint answers <code>402 Payment Required</code> with the exact price for your query in the <code>PAYMENT-REQUIRED</code> header; an x402 client such as <code>arrow402 query</code> signs the payment and retries.</p>`
    : "";
  return `<section class="panel full-data" aria-labelledby="full-data-heading">
<h2 id="full-data-heading">Get the full data</h2>
<p>The charts above are drawn from ${options.sampled ? "a sample" : "a snapshot taken when this page was generated"}. Query the whole table <code>${escapeHtml(table.name)}</code> with SQL, as Apache Arrow, CSV, JSON, NDJSON or Parquet, at the same price in every format.</p>
${priceHtml}
${options.tokens === undefined ? "" : renderCheckout(queryCheckout({ tokens: options.tokens }, table.name, sql), { headingLevel: 3, noScript: "The commands below do not." })}
<h3>With the arrow402 client</h3>
${code(cli)}
${cliNote}
<h3>With curl</h3>
${code(curl(base, sql, `${stem}.arrow`))}
${code(curl(base, sql, `${stem}.csv`, "text/csv"))}
${formatsTable()}
<p class="muted"><code>--compressed</code> lets the server compress the transfer with zstd or gzip; curl decompresses it, so the file holds the same bytes.</p>
${curlNote}
${mcpSection(base, options.mcpMaxRows, paid)}
</section>`;
}
