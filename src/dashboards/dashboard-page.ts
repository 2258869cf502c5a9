/**
 * A scaffolded dashboard's `index.html` (ARCHITECTURE.md §7): charts drawn in the browser from
 * `snapshot.arrow`, a sortable preview table, the table's schema and the "get the full data"
 * panel. Asset URLs are absolute (`/<slug>/…`) so the page works at `/<slug>` and `/<slug>/`.
 */
import { arrowTypeFor } from "../arrow/types.ts";
import type { Config, DashboardEntry } from "../config/types.ts";
import type { TableInfo } from "../catalog.ts";
import type { DashboardPlan } from "./chart-plan.ts";
import { renderFullDataPanel } from "./full-data.ts";
import { escapeHtml, jsonForScript } from "./html.ts";
import { formatTimestamp, renderPage, renderTags } from "./layout.ts";
import type { Snapshot } from "./snapshot.ts";
import { formatSpan } from "./time-values.ts";

export interface DashboardPageInput {
  entry: DashboardEntry;
  table: TableInfo;
  snapshot: Pick<Snapshot, "rows" | "totalRows" | "sampled" | "orderedBy" | "span" | "takenAt">;
  plan: DashboardPlan;
  baseUrl: string;
  /** limits.mcp_max_rows, for the panel's MCP section. */
  mcpMaxRows: number;
  /** The config's tokens, for the panel's checkout. */
  tokens: Config["tokens"];
}

function charts(plan: DashboardPlan): string {
  if (plan.charts.length === 0) {
    return `<p class="muted">This table has no column that charts well (a time, numeric or few-valued text column).</p>`;
  }
  const figures = plan.charts.map(
    (chart, i) => `<figure class="chart" data-chart="${i}">
<figcaption><strong>${escapeHtml(chart.title)}</strong><span class="detail"></span></figcaption>
<div class="canvas"></div>
</figure>`,
  );
  return `<div class="charts">\n${figures.join("\n")}\n</div>`;
}

/** What the schema's third column holds: the type the table's source declares. */
const DECLARED_TYPE: Readonly<Record<NonNullable<TableInfo["engine"]>, string>> = { sqlite: "SQLite type", postgres: "PostgreSQL type", duckdb: "DuckDB type" };

function schema(table: TableInfo): string {
  const rows = table.columns.map(
    (c) =>
      `<tr><th scope="row"><code>${escapeHtml(c.name)}</code></th><td><code>${escapeHtml(arrowTypeFor(c).toString())}</code></td>` +
      `<td><code>${escapeHtml(c.declaredType || "(none)")}</code></td><td>${c.nullable ? "yes" : "no"}</td>` +
      `<td>${escapeHtml(c.description ?? "")}</td></tr>`,
  );
  return `<div class="table-scroll"><table>
<caption>Columns of <code>${escapeHtml(table.name)}</code> and the Arrow type each has in query results</caption>
<thead><tr><th scope="col">Column</th><th scope="col">Arrow type</th><th scope="col">${DECLARED_TYPE[table.engine ?? "sqlite"]}</th><th scope="col">Nullable</th><th scope="col">Description</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table></div>`;
}

function sampleNote(input: DashboardPageInput): string {
  const { snapshot, table } = input;
  const taken = snapshot.rows.length.toLocaleString("en-US");
  const total = snapshot.totalRows.toLocaleString("en-US");
  const what = snapshot.sampled ? `${taken} rows sampled evenly from ${total}` : `All ${total} rows`;
  const along = snapshot.sampled && snapshot.orderedBy ? ` along <code>${escapeHtml(snapshot.orderedBy)}</code>` : "";
  const span = snapshot.span ? `, ${escapeHtml(formatSpan(snapshot.span))}` : "";
  const estimate = snapshot.sampled
    ? ` Row counts and sums in the charts are estimates for the whole table: each sampled row stands for about ${Math.round(input.plan.rowsPerSampleRow).toLocaleString("en-US")} rows.`
    : "";
  return `Snapshot of table <code>${escapeHtml(table.name)}</code>: ${what}${along}${span}, taken ${escapeHtml(formatTimestamp(snapshot.takenAt))}.${estimate}`;
}

function previewNote(input: DashboardPageInput): string {
  const shown = Math.min(input.plan.previewRows, input.snapshot.rows.length).toLocaleString("en-US");
  const which = input.snapshot.orderedBy
    ? `The ${shown} most recent rows of the snapshot, by <code>${escapeHtml(input.snapshot.orderedBy)}</code>.`
    : `The first ${shown} rows of the snapshot.`;
  return `${which} Select a column heading to sort the whole snapshot by it.`;
}

export function renderDashboardPage(input: DashboardPageInput): string {
  const { entry, table, plan } = input;
  const base = `/${encodeURIComponent(entry.slug)}/`;
  return renderPage({
    title: `${entry.title} · arrow402`,
    styles: `<link rel="stylesheet" href="${escapeHtml(base)}style.css">`,
    header: `<p class="brand"><a href="/">arrow402 dashboards</a></p>
<h1>${escapeHtml(entry.title)}</h1>
${entry.description ? `<p class="lede">${escapeHtml(entry.description)}</p>` : ""}
${renderTags(entry.tags)}`,
    main: `<p class="muted">${sampleNote(input)}</p>
<p class="status" role="status" id="status">Loading the snapshot…</p>
<noscript><p class="status">The charts and the preview need JavaScript; the schema and the query examples below do not.</p></noscript>
<section aria-labelledby="charts-heading">
<h2 id="charts-heading">Charts</h2>
${charts(plan)}
</section>
<section aria-labelledby="preview-heading">
<h2 id="preview-heading">Preview</h2>
<p class="muted">${previewNote(input)}</p>
<div class="table-scroll tall" role="region" aria-labelledby="preview-heading" tabindex="0">
<table id="preview"><thead></thead><tbody></tbody></table>
</div>
</section>
<section aria-labelledby="schema-heading">
<h2 id="schema-heading">Schema</h2>
${schema(table)}
</section>
${renderFullDataPanel(table, { baseUrl: input.baseUrl, sampled: input.snapshot.sampled, mcpMaxRows: input.mcpMaxRows, tokens: input.tokens })}`,
    footer: `<p>Generated by <code>arrow402 dashboards</code>. Edit this folder freely: it is not regenerated without <code>--force</code>.</p>`,
    scripts: `<script type="application/json" id="dashboard-plan">${jsonForScript(plan)}</script>
<script type="module" src="${escapeHtml(base)}dashboard.js"></script>
<script type="module" src="${escapeHtml(base)}checkout.js"></script>`,
  });
}
