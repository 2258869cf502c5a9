/**
 * Horizontal bar charts: rows per category (the most frequent first), and one bar per row of a
 * small table (a value per label, on a log scale when the values span several decades, with the
 * value written at the end of each bar).
 */
import * as Plot from "@observablehq/plot";
import type { ChartSpec } from "../chart-plan.ts";
import { estimateNote, formatCompact, formatValue, rowsLabel, scaledCount, type Estimate } from "./chart-scale.ts";
import type { Drawn } from "./drawn.ts";
import { chartNumber, type Row } from "./data.ts";
import { logAxis, logBins } from "./log-axis.ts";

const ROW_HEIGHT = 26;

function labelMargin(labels: string[]): number {
  const longest = labels.reduce((n, v) => Math.max(n, v.length), 0);
  return Math.min(200, 12 + longest * 7);
}

export function drawBar(chart: Extract<ChartSpec, { kind: "bar" }>, rows: Row[], width: number, estimate: Estimate): Drawn {
  // Numbers stay numbers (a fee tier, a decimals count): Plot warns about digits given as text.
  const values = rows
    .map((r) => r[chart.y] ?? null)
    .filter((v) => v !== null)
    .map((v) => (typeof v === "number" || typeof v === "bigint" ? Number(v) : String(v)));
  const detail = `Rows for each value of ${chart.y}${estimateNote(estimate)}`;
  const element = Plot.plot({
    width,
    height: Math.max(120, new Set(values).size * ROW_HEIGHT + 40),
    marginLeft: labelMargin(values.map(String)),
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: { grid: true, label: rowsLabel(estimate), tickFormat: formatCompact },
    y: { label: null },
    marks: [
      Plot.barX(values, Plot.groupY({ x: scaledCount(estimate) }, { y: (d: string | number) => d, sort: { y: "x", reverse: true } })),
      Plot.ruleX([0]),
    ],
  });
  return { element, detail };
}

export function drawValues(chart: Extract<ChartSpec, { kind: "values" }>, rows: Row[], width: number): Drawn {
  const points = rows
    .map((r) => ({ label: String(r[chart.label] ?? ""), value: chartNumber(r[chart.x] ?? null) }))
    .filter((p): p is { label: string; value: number } => p.value !== null)
    .sort((a, b) => b.value - a.value);
  const log = chart.log && points.length > 0 && points.every((p) => p.value > 0);
  const bins = log ? logBins(points.map((p) => p.value)) : undefined;
  const detail = `${chart.x} of each ${chart.label}${log ? " (log scale)" : ""}`;
  const base = bins ? bins.domain[0] : 0;
  const element = Plot.plot({
    width,
    height: Math.max(120, points.length * ROW_HEIGHT + 40),
    marginLeft: labelMargin(points.map((p) => p.label)),
    marginRight: 48,
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: bins ? logAxis(chart.x, bins, width) : { grid: true, label: chart.x, tickFormat: formatCompact },
    y: { label: null, domain: points.map((p) => p.label) },
    marks: [
      // On a log scale a bar cannot start at 0: it starts at the axis' first decade.
      Plot.barX(points, { y: "label", x1: () => base, x2: "value" }),
      Plot.text(points, { y: "label", x: "value", text: (p: { value: number }) => formatValue(p.value), textAnchor: "start", dx: 4 }),
      ...(bins ? [] : [Plot.ruleX([0])]),
    ],
  });
  return { element, detail };
}
