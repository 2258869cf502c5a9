/**
 * Log-scaled axes for skewed positive data (trade sizes, prices across tokens): bin edges evenly
 * spaced in log10 and ticks at powers of ten (with 2× and 5× when the range is short), so the
 * labels never crowd.
 */
import { formatCompact } from "./chart-scale.ts";

export interface LogBins {
  thresholds: number[];
  ticks: number[];
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
  const ticks: number[] = [];
  for (let d = low; d <= high; d++) {
    ticks.push(10 ** d);
    if (decades <= 3 && d < high) ticks.push(2 * 10 ** d, 5 * 10 ** d);
  }
  return { thresholds, ticks, domain: [10 ** low, 10 ** high] };
}

export function logAxis(label: string, bins: LogBins) {
  return { type: "log" as const, domain: bins.domain, ticks: bins.ticks, tickFormat: formatCompact, label };
}
