/**
 * Draws the planned charts with Observable Plot (DESIGN.md §7). Marks use the page's accent
 * colour through CSS, so light and dark schemes both read well; every SVG carries an
 * aria-label and aria-description for screen readers.
 */
import * as Plot from "@observablehq/plot";
import type { ChartSpec } from "../chart-plan.ts";
import { chartNumber, type Row } from "./data.ts";

type TimeInterval = "hour" | "day" | "week" | "month";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Enough bins to show a shape, few enough to stay readable on a phone. */
export function intervalFor(spanMs: number): TimeInterval {
  if (spanMs <= 7 * DAY) return "hour";
  if (spanMs <= 180 * DAY) return "day";
  if (spanMs <= 3 * 365 * DAY) return "week";
  return "month";
}

function timeSpan(rows: Row[], x: string): number {
  let min = Infinity;
  let max = -Infinity;
  for (const row of rows) {
    const value = row[x];
    if (!(value instanceof Date)) continue;
    const t = value.getTime();
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return max >= min ? max - min : 0;
}

interface Drawn {
  element: SVGSVGElement | HTMLElement;
  detail: string;
}

function drawTime(chart: Extract<ChartSpec, { kind: "time" }>, rows: Row[], width: number): Drawn {
  const interval = intervalFor(timeSpan(rows, chart.x));
  const points = rows
    .filter((r) => r[chart.x] instanceof Date)
    .map((r) => ({ x: r[chart.x] as Date, y: chart.y === null ? 1 : chartNumber(r[chart.y] ?? null) }))
    .filter((p) => p.y !== null);
  const what = chart.y === null ? "Number of rows" : `Sum of ${chart.y}`;
  const detail = `${what} per ${interval}, by ${chart.x} (UTC)`;
  const reducer = chart.y === null ? "count" : "sum";
  // Passed as a variable: Plot's typings omit the `y` input that the sum reducer reads.
  const binned = { x: "x", y: "y", interval, curve: "step" } as const;
  const element = Plot.plot({
    width,
    height: 260,
    marginLeft: 56,
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: { type: "utc", label: null },
    y: { grid: true, label: what },
    marks: [
      Plot.areaY(points, Plot.binX({ y: reducer }, binned)),
      Plot.lineY(points, Plot.binX({ y: reducer }, binned)),
      Plot.ruleY([0]),
    ],
  });
  return { element, detail };
}

function drawHistogram(chart: Extract<ChartSpec, { kind: "histogram" }>, rows: Row[], width: number): Drawn {
  const values = rows.map((r) => chartNumber(r[chart.x] ?? null)).filter((v): v is number => v !== null);
  const detail = `Number of rows per range of ${chart.x} (${values.length.toLocaleString("en-US")} non-null values)`;
  const element = Plot.plot({
    width,
    height: 260,
    marginLeft: 56,
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: { label: chart.x },
    y: { grid: true, label: "Rows" },
    marks: [Plot.rectY(values, Plot.binX({ y: "count" }, { x: (d: number) => d })), Plot.ruleY([0])],
  });
  return { element, detail };
}

function drawBar(chart: Extract<ChartSpec, { kind: "bar" }>, rows: Row[], width: number): Drawn {
  const values = rows.map((r) => r[chart.y]).filter((v) => v !== null && v !== undefined).map(String);
  const longest = values.reduce((n, v) => Math.max(n, v.length), 0);
  const detail = `Number of rows for each value of ${chart.y}`;
  const element = Plot.plot({
    width,
    height: Math.max(120, new Set(values).size * 26 + 40),
    marginLeft: Math.min(200, 12 + longest * 7),
    ariaLabel: chart.title,
    ariaDescription: detail,
    x: { grid: true, label: "Rows" },
    y: { label: null },
    marks: [
      Plot.barX(values, Plot.groupY({ x: "count" }, { y: (d: string) => d, sort: { y: "x", reverse: true } })),
      Plot.ruleX([0]),
    ],
  });
  return { element, detail };
}

export function drawChart(chart: ChartSpec, rows: Row[], width: number): Drawn {
  switch (chart.kind) {
    case "time":
      return drawTime(chart, rows, width);
    case "histogram":
      return drawHistogram(chart, rows, width);
    case "bar":
      return drawBar(chart, rows, width);
  }
}
