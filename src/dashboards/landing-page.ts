/**
 * The landing page `<root>/index.html` (spec "GET /", ARCHITECTURE.md §7): every enabled dashboard with
 * its title, description, tags and link, and every published table with its price in human units.
 * The CSS is inlined because the root serves no file besides `index.html`.
 */
import type { Config, DashboardEntry, TableConfig } from "../config/types.ts";
import { escapeHtml } from "./html.ts";
import { formatTimestamp, renderPage, renderTags } from "./layout.ts";
import { describeTablePrices } from "./prices.ts";
import styleSheet from "./style.css" with { type: "text" };

function dashboardCard(entry: DashboardEntry): string {
  const href = `/${encodeURIComponent(entry.slug)}/`;
  return `<li class="card"><article>
<h3><a href="${escapeHtml(href)}">${escapeHtml(entry.title)}</a></h3>
${entry.description ? `<p>${escapeHtml(entry.description)}</p>` : ""}
${renderTags(entry.tags)}
<p class="meta">Charts of table <code>${escapeHtml(entry.table)}</code></p>
</article></li>`;
}

function tableRow(table: TableConfig): string {
  const prices = describeTablePrices(table);
  const price =
    prices.length === 0
      ? "Free"
      : `<ul>${prices.map((p) => `<li>${escapeHtml(p)}</li>`).join("")}</ul>`;
  return `<tr><th scope="row"><code>${escapeHtml(table.name)}</code></th><td>${escapeHtml(table.description)}</td><td>${price}</td></tr>`;
}

export function renderLandingPage(config: Config, generatedAt: Date): string {
  const entries = (config.dashboards?.entries ?? []).filter((e) => e.enabled);
  const dashboards =
    entries.length === 0
      ? `<p class="muted">No dashboards are enabled.</p>`
      : `<ul class="cards">\n${entries.map(dashboardCard).join("\n")}\n</ul>`;
  const tables =
    config.tables.length === 0
      ? `<p class="muted">No tables are published.</p>`
      : `<div class="table-scroll"><table>
<caption>Query any table with SQL over HTTP; results are Apache Arrow streams, paid per query with x402.</caption>
<thead><tr><th scope="col">Table</th><th scope="col">Description</th><th scope="col">Price</th></tr></thead>
<tbody>
${config.tables.map(tableRow).join("\n")}
</tbody>
</table></div>`;
  const api = `${config.server.baseUrl.replace(/\/+$/, "")}/api/`;
  return renderPage({
    title: "Dashboards · arrow402",
    styles: `<style>\n${styleSheet}</style>`,
    header: `<p class="brand">arrow402</p>
<h1>Data dashboards</h1>
<p class="lede">Charts of the tables this server publishes. The full data is available as Apache Arrow over HTTP: start from the <a href="/api/">API discovery document</a>.</p>`,
    main: `<section aria-labelledby="dashboards-heading">
<h2 id="dashboards-heading">Dashboards</h2>
${dashboards}
</section>
<section aria-labelledby="tables-heading">
<h2 id="tables-heading">Tables</h2>
${tables}
</section>`,
    footer: `<p>Generated ${escapeHtml(formatTimestamp(generatedAt))} by <code>arrow402 dashboards</code>. API: <code>${escapeHtml(api)}</code></p>`,
  });
}
