/**
 * Log-scaled axes for skewed positive data (trade sizes, prices across tokens): bin edges evenly
 * spaced in log10 and ticks at powers of ten, thinned or filled in to suit the chart's width, so
 * the labels never crowd.
 */
import { formatCompact } from "./chart-scale.ts";

export interface LogBins {
  thresholds: number[];
  /** The domain in decades: 10^low to 10^high. */
  low: number;
  high: number;
  domain: [number, number];
}

/** Edges from the decade below the smallest value to the decade above the largest. */
export function logBins(values: number[]): LogBins {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const low = Math.floor(Math.log10(min));
  const high = Math.max(low + 1, Math.ceil(Math.log10(max)));
  const decades = high - low;
  // About 30 bins whatever the range: between 2 and 10 per decade.
  const perDecade = Math.min(10, Math.max(2, Math.round(30 / decades)));
  const thresholds = Array.from({ length: decades * perDecade + 1 }, (_, k) => 10 ** (low + k / perDecade));
  return { thresholds, low, high, domain: [10 ** low, 10 ** high] };
}

/** About 48 px per label. */
const TICK_SPACING = 48;

/** Powers of ten (every other one when they would crowd), with 2× and 5× when there is room. */
function logTicks(bins: LogBins, width: number): number[] {
  const room = Math.max(2, Math.floor(width / TICK_SPACING));
  const decades = bins.high - bins.low;
  const step = Math.ceil((decades + 1) / room);
  const ticks: number[] = [];
  for (let d = bins.low; d <= bins.high; d += step) {
    ticks.push(10 ** d);
    if (decades * 3 + 1 <= room && d < bins.high) ticks.push(2 * 10 ** d, 5 * 10 ** d);
  }
  return ticks;
}

export function logAxis(label: string, bins: LogBins, width: number) {
  return { type: "log" as const, domain: bins.domain, ticks: logTicks(bins, width), tickFormat: formatCompact, label };
}
