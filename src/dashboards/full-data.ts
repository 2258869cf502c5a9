/**
 * The "get the full data" panel of a dashboard: the table's price in human units and ready
 * commands for the query endpoint (DESIGN.md §4, §6). The SQL is quoted for a POSIX shell.
 */
import type { TableInfo } from "../db/catalog.ts";
import { escapeHtml } from "./html.ts";
import { describeTablePrices, queriesArePaid } from "./prices.ts";
import { quoteIdentifier, timeColumnOf } from "./snapshot.ts";

const BARE_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function sqlIdentifier(name: string): string {
  return BARE_IDENTIFIER.test(name) ? name : quoteIdentifier(name);
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export function exampleQuery(table: TableInfo): string {
  const time = timeColumnOf(table);
  const order = time ? ` ORDER BY ${sqlIdentifier(time.name)} DESC` : "";
  return `SELECT * FROM ${sqlIdentifier(table.name)}${order} LIMIT 100`;
}

/** `sampled`: the dashboard's snapshot is a sample rather than the whole table. */
export function renderFullDataPanel(table: TableInfo, baseUrl: string, sampled = true): string {
  const base = baseUrl.replace(/\/+$/, "");
  const sql = exampleQuery(table);
  const file = `${table.name.replace(/[^A-Za-z0-9_-]+/g, "_") || "result"}.arrow`;
  const cli = `arrow402 query ${shellQuote(base)} ${shellQuote(sql)}`;
  const curl = `curl -sS -G ${shellQuote(`${base}/api/query`)} \\\n  --data-urlencode ${shellQuote(`query=${sql}`)} \\\n  -o ${shellQuote(file)}`;
  const prices = describeTablePrices(table.config);
  const paid = queriesArePaid(table.config);
  const priceHtml =
    prices.length === 0
      ? `<p><strong>Free:</strong> queries on this table need no payment.</p>`
      : `<ul class="price-list">${prices.map((p) => `<li>${escapeHtml(p)}</li>`).join("")}</ul>`;
  const curlNote = paid
    ? `<p class="muted">Without payment the query endpoint answers <code>402 Payment Required</code> with the exact price for your query in the <code>PAYMENT-REQUIRED</code> header; an x402 client such as <code>arrow402 query</code> signs the payment and retries.</p>`
    : "";
  return `<section class="panel" aria-labelledby="full-data-heading">
<h2 id="full-data-heading">Get the full data</h2>
<p>The charts above are drawn from ${sampled ? "a sample" : "a snapshot taken when this page was generated"}. Query the whole table <code>${escapeHtml(table.name)}</code> with SQL; results are Apache Arrow IPC streams.</p>
${priceHtml}
<h3>With the arrow402 client</h3>
<pre><code>${escapeHtml(cli)}</code></pre>
<h3>With curl</h3>
<pre><code>${escapeHtml(curl)}</code></pre>
${curlNote}
</section>`;
}
