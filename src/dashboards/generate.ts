/**
 * `arrow402 dashboards [SLUG] [--force]` (ARCHITECTURE.md §1, §7): scaffolds each missing dashboard
 * folder (or only SLUG) as a working static page charting a snapshot of its table, and
 * (re)writes the landing page `<root>/index.html`. An existing folder is kept unless `force`,
 * and then it is moved to a backup first.
 */
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Config, DashboardEntry } from "../config/types.ts";
import { ConfigError } from "../errors.ts";
import type { Catalog } from "../catalog.ts";
import type { TableEngine } from "../engines/engine.ts";
import { BROWSER_BUNDLE } from "./browser-bundle.ts";
import { CHECKOUT_BUNDLE } from "../checkout/bundle.ts";
import { planCharts, type DashboardPlan } from "./chart-plan.ts";
import { renderDashboardPage } from "./dashboard-page.ts";
import { moveToBackup, pathExists, writeFileAtomically, writeTemporaryFolder, type FolderFiles } from "./folders.ts";
import { renderLandingPage } from "./landing-page.ts";
import { queriesArePaid } from "../payment/terms.ts";
import { SNAPSHOT_ROW_CAP, takeSnapshot } from "./snapshot.ts";
import styleSheet from "./style.css" with { type: "text" };

export interface GenerateOptions {
  config: Config;
  /** The engine of each source (engines/sources.ts openEngines): a snapshot is sampled by its table's. */
  engines: ReadonlyMap<string, TableEngine>;
  catalog: Catalog;
  /** Only this dashboard (enabled or not); otherwise every enabled one. */
  slug?: string;
  /** Regenerate existing folders, moving each to `<slug>.bak-<timestamp>` first. */
  force?: boolean;
  log?: (line: string) => void;
  /** Rows in each snapshot (default 5,000). */
  snapshotRows?: number;
  now?: Date;
}

export interface GenerateResult {
  /** Absolute paths: each dashboard folder written, then the landing page. */
  written: string[];
  /** Absolute paths of existing dashboard folders left as they were. */
  skipped: string[];
  /** Absolute paths the replaced folders were moved to. */
  backups: string[];
}

const PREVIEW_ROWS = 100;

function selectEntries(entries: DashboardEntry[], slug: string | undefined): DashboardEntry[] {
  if (slug === undefined) return entries.filter((e) => e.enabled);
  const entry = entries.find((e) => e.slug === slug);
  if (!entry) {
    const known = entries.map((e) => e.slug).join(", ") || "none";
    throw new ConfigError([`dashboards.entries: no dashboard with slug '${slug}' (configured: ${known})`]);
  }
  return [entry];
}

async function dashboardFiles(opts: GenerateOptions, entry: DashboardEntry): Promise<{ files: FolderFiles; summary: string; warning?: string }> {
  const { config, engines, catalog } = opts;
  const table = catalog.table(entry.table);
  if (!table) {
    const index = config.dashboards?.entries.indexOf(entry) ?? -1;
    throw new ConfigError([`dashboards.entries[${index}].table: '${entry.table}' is not a configured table of the database`]);
  }
  const engine = engines.get(table.config.database);
  if (!engine) throw new Error(`no engine is open for the source '${table.config.database}' of table '${table.name}'`);
  const snapshot = await takeSnapshot(engine, table, opts.snapshotRows ?? SNAPSHOT_ROW_CAP, opts.now ?? new Date());
  const columns = table.columns.map((c) => ({ name: c.name, kind: c.kind }));
  const plan: DashboardPlan = {
    snapshotUrl: `/${encodeURIComponent(entry.slug)}/snapshot.arrow`,
    columns,
    charts: planCharts(table.columns, snapshot.rows),
    previewRows: PREVIEW_ROWS,
    rowsPerSampleRow: snapshot.sampled && snapshot.rows.length > 0 ? snapshot.totalRows / snapshot.rows.length : 1,
  };
  const page = renderDashboardPage({ entry, table, snapshot, plan, baseUrl: config.server.baseUrl, mcpMaxRows: config.limits.mcpMaxRows, tokens: config.tokens });
  // snapshot.arrow is served to anyone: a sample of a paid table is its free preview, the whole of it is the table.
  const whole = !snapshot.sampled && snapshot.totalRows > 0 && queriesArePaid(table.config.priceTags);
  return {
    files: { "index.html": page, "style.css": styleSheet, "dashboard.js": BROWSER_BUNDLE, "checkout.js": CHECKOUT_BUNDLE, "snapshot.arrow": snapshot.arrow },
    summary: `${snapshot.rows.length} of ${snapshot.totalRows} rows of '${table.name}', ${plan.charts.length} charts`,
    ...(whole
      ? { warning: `note: the snapshot of ${entry.slug} holds every row of '${table.name}' (${snapshot.totalRows}), whose queries are paid: anyone can download them free from /${entry.slug}/snapshot.arrow: remove the dashboard if that is not intended` }
      : {}),
  };
}

export async function generateDashboards(opts: GenerateOptions): Promise<GenerateResult> {
  const dashboards = opts.config.dashboards;
  if (!dashboards) {
    throw new ConfigError(["dashboards: not configured; add a 'dashboards' section with 'root' and 'entries'"]);
  }
  const log = opts.log ?? (() => {});
  const now = opts.now ?? new Date();
  const { root } = dashboards;
  const result: GenerateResult = { written: [], skipped: [], backups: [] };
  await mkdir(root, { recursive: true });

  for (const entry of selectEntries(dashboards.entries, opts.slug)) {
    const folder = join(root, entry.slug);
    const exists = await pathExists(folder);
    if (exists && !opts.force) {
      log(`kept ${folder} (it exists; use --force to regenerate it)`);
      result.skipped.push(folder);
      continue;
    }
    const { files, summary, warning } = await dashboardFiles(opts, entry);
    if (warning !== undefined) log(warning);
    const temporary = await writeTemporaryFolder(root, entry.slug, files);
    try {
      if (exists) {
        const backup = await moveToBackup(root, entry.slug, now);
        log(`moved the old ${folder} to ${backup}`);
        result.backups.push(backup);
      }
      await rename(temporary, folder);
    } catch (error) {
      await rm(temporary, { recursive: true, force: true });
      throw error;
    }
    log(`wrote ${folder} (${summary}${entry.enabled ? "" : "; disabled, so not served"})`);
    result.written.push(folder);
  }

  const landing = join(root, "index.html");
  await writeFileAtomically(landing, renderLandingPage(opts.config, now));
  log(`wrote ${landing}`);
  result.written.push(landing);
  return result;
}
