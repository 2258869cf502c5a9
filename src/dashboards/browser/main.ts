/**
 * Entry point of the dashboard bundle (`dashboard.js`): reads the plan written by the generator,
 * decodes the snapshot and draws the charts and the preview. Bundled with apache-arrow and
 * Observable Plot into one file, so viewing needs nothing but this server (ARCHITECTURE.md §7).
 */
import type { DashboardPlan } from "../chart-plan.ts";
import { drawChart } from "./charts.ts";
import { decodeSnapshot, type Row } from "./data.ts";
import { renderPreview } from "./preview.ts";

function setStatus(text: string, isError = false): void {
  const status = document.getElementById("status");
  if (!status) return;
  status.textContent = text;
  status.classList.toggle("error", isError);
  status.hidden = text === "";
}

function drawCharts(plan: DashboardPlan, rows: Row[]): void {
  plan.charts.forEach((chart, i) => {
    const figure = document.querySelector<HTMLElement>(`figure[data-chart="${i}"]`);
    const canvas = figure?.querySelector<HTMLElement>(".canvas");
    if (!figure || !canvas) return;
    const width = Math.max(280, Math.floor(canvas.clientWidth || figure.clientWidth || 640));
    const { element, detail } = drawChart(chart, rows, width, { scale: plan.rowsPerSampleRow });
    canvas.replaceChildren(element);
    const caption = figure.querySelector(".detail");
    if (caption) caption.textContent = detail;
  });
}

/** Redraws after the layout width changes (a phone turned, a window resized). */
function redrawOnResize(plan: DashboardPlan, rows: Row[]): void {
  let lastWidth = window.innerWidth;
  let timer: ReturnType<typeof setTimeout> | undefined;
  window.addEventListener("resize", () => {
    if (window.innerWidth === lastWidth) return;
    lastWidth = window.innerWidth;
    clearTimeout(timer);
    timer = setTimeout(() => drawCharts(plan, rows), 150);
  });
}

async function main(): Promise<void> {
  const planElement = document.getElementById("dashboard-plan");
  if (!planElement?.textContent) throw new Error("The page has no dashboard plan.");
  const plan = JSON.parse(planElement.textContent) as DashboardPlan;
  const response = await fetch(plan.snapshotUrl);
  if (!response.ok) throw new Error(`Could not load the snapshot (HTTP ${response.status}).`);
  const rows = decodeSnapshot(new Uint8Array(await response.arrayBuffer()), plan.columns);
  drawCharts(plan, rows);
  redrawOnResize(plan, rows);
  const table = document.getElementById("preview");
  if (table instanceof HTMLTableElement) renderPreview(table, plan.columns, rows, plan.previewRows);
  setStatus(rows.length === 0 ? "The snapshot has no rows." : "");
}

main().catch((error: unknown) => {
  setStatus(error instanceof Error ? error.message : String(error), true);
  console.error(error);
});
