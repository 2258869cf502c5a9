/**
 * Draws the planned charts with Observable Plot (ARCHITECTURE.md §7). Marks use the page's accent
 * colour through CSS, so light and dark schemes both read well; every SVG carries an
 * aria-label and aria-description for screen readers. Counts and sums are scaled from the
 * sample to the whole table (see chart-scale.ts); the caption says so.
 */
import * as Plot from "@observablehq/plot";
import type { ChartSpec } from "../chart-plan.ts";
import { estimateNote, formatCompact, rowsLabel, scaledCount, scaledSum, type Estimate } from "./chart-scale.ts";
import { logAxis, logBins } from "./log-axis.ts";
import { chartNumber, type Row } from "./data.ts";
import { drawBar, drawValues } from "./bar-charts.ts";
import type { Drawn } from "./drawn.ts";

const HEIGHT = 260;

function drawTime(chart: Extract<ChartSpec, { kind: "time" }>, rows: Row[], width: number, estimate: Estimate): Drawn {
  const { y } = chart;
  const points = rows
    .filter((r) => r[chart.x] instanceof Date)
    .map((r) => ({ x: r[chart.x] as Date, y: y === null ? 1 : chartNumber(r[y] ?? null) }))
    .filter((p): p is { x: Date; y: number } => p.y !== null);
  const what = y === null ? rowsLabel(estimate) : `${chart.reduce === "mean" ? "Mean" : "Sum"} of ${y}`;
  // A mean needs no scaling: the sample's mean estimates the table's.
  const scaled = chart.reduce !== "mean";
  const detail = `${y === null ? "Rows" : what} per ${chart.interval}, by ${chart.x} (UTC)${scaled ? estimateNote(estimate) : ""}`;
  const reducer = chart.reduce === "count" ? scaledCount(estimate) : chart.reduce === "sum" ? scaledSum(estimate) : "mean";
  // Bars, one per interval: a bin's extent is exact, where a line through midpoints loses the ends.
  // Passed as a variable: Plot's typings omit the `y` input that the reducer reads.
  const binned = { x: "x", y: "y", interval: chart.interval, inset: 0.5 } as const;
  const element = Plot.plot({
    width,
    height: HEIGHT,
    marginLeft: 52,
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: { type: "utc", label: null },
    y: { grid: true, label: what, tickFormat: formatCompact },
    marks: [
      Plot.rectY(points, Plot.binX({ y: reducer }, binned)),
      Plot.ruleY([0]),
    ],
  });
  return { element, detail };
}

function drawHistogram(chart: Extract<ChartSpec, { kind: "histogram" }>, rows: Row[], width: number, estimate: Estimate): Drawn {
  const values = rows.map((r) => chartNumber(r[chart.x] ?? null)).filter((v): v is number => v !== null);
  const positive = values.filter((v) => v > 0);
  const log = chart.log && positive.length === values.length && values.length > 0;
  const count = values.length.toLocaleString("en-US");
  const detail = `Rows per range of ${chart.x}${log ? " on a log scale" : ""}, from ${count} values${estimateNote(estimate)}`;
  const bins = log ? logBins(values) : undefined;
  const element = Plot.plot({
    width,
    height: HEIGHT,
    marginLeft: 52,
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: log && bins ? logAxis(chart.x, bins, width) : { label: chart.x, tickFormat: formatCompact },
    y: { grid: true, label: rowsLabel(estimate), tickFormat: formatCompact },
    marks: [
      Plot.rectY(values, Plot.binX({ y: scaledCount(estimate) }, { x: (d: number) => d, ...(bins ? { thresholds: bins.thresholds } : {}) })),
      Plot.ruleY([0]),
    ],
  });
  return { element, detail };
}

export function drawChart(chart: ChartSpec, rows: Row[], width: number, estimate: Estimate): Drawn {
  switch (chart.kind) {
    case "time":
      return drawTime(chart, rows, width, estimate);
    case "histogram":
      return drawHistogram(chart, rows, width, estimate);
    case "bar":
      return drawBar(chart, rows, width, estimate);
    case "values":
      return drawValues(chart, rows, width);
  }
}
