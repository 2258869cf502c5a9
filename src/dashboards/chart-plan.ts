/**
 * Which charts a scaffolded dashboard draws (ARCHITECTURE.md §7). Decided at generation time from the
 * column kinds, the config's column descriptions and the snapshot, written into the page as JSON,
 * and drawn by the browser code:
 *   - a time column → rows per interval, and the best measure per interval (sum, or mean for
 *     values that average rather than add up), the interval picked from the snapshot's span;
 *   - the best measures → their histograms, on a log scale when positive and skewed;
 *     in a small table with a unique label column, the best measure per label instead;
 *   - a text, boolean or few-valued integer column whose values repeat → a bar chart of counts.
 * Identifiers and counters are never measures: the rowid alias, names in ID_NAME, and columns
 * that only grow (or only shrink) with time in the snapshot. Every engine's kinds take part: a time
 * column is a date or a timestamp (ms or µs), a measure any integer, float or decimal (a decimal as
 * the nearest double of its exact value); a list column is never charted.
 */
import type { ArrowKind } from "../arrow/types.ts";
import { distinctValues, isMonotonicWithTime, isSkewedPositive, numberOf, numbersOf } from "./column-stats.ts";
import { intervalFor, isTimeKind, timeMs, timeSpanOf, type TimeInterval } from "./time-values.ts";

export type TimeReduce = "count" | "sum" | "mean";

export type ChartSpec =
  /** `y` null: rows per interval (`reduce` "count"). */
  | { kind: "time"; x: string; y: string | null; reduce: TimeReduce; interval: TimeInterval; title: string }
  | { kind: "histogram"; x: string; log: boolean; title: string }
  | { kind: "bar"; y: string; title: string }
  /** One bar per row of a small table: the value of `x` for each `label`. */
  | { kind: "values"; label: string; x: string; log: boolean; title: string };

export interface PlanColumn {
  name: string;
  kind: ArrowKind;
}

/** What the plan knows of a column besides its kind. */
export interface PlanInputColumn extends PlanColumn {
  /** decimal128: its scale (values are unscaled bigints). */
  scale?: number;
  /** From the config's `columns:`. */
  description?: string;
  /** The table's rowid under another name (catalog.ts `rowidAlias`): an identifier. */
  rowidAlias?: boolean;
}

/** What the browser code needs: read from `<script id="dashboard-plan">`. */
export interface DashboardPlan {
  snapshotUrl: string;
  columns: PlanColumn[];
  charts: ChartSpec[];
  /** Rows shown in the preview table (after sorting the whole snapshot). */
  previewRows: number;
  /** Rows of the table each snapshot row stands for: 1 for the whole table, 50 for a 1-in-50 sample. */
  rowsPerSampleRow: number;
}

export const MAX_CATEGORIES = 20;
/** An integer column with this few distinct values is a category (a fee tier, a decimals count). */
export const MAX_NUMBER_CATEGORIES = 12;
/** Fewer values than this and a histogram or a time series shows noise. */
export const MIN_VALUES_TO_CHART = 20;
/** A table this small is charted row by row, when it has a label column. */
export const SMALL_TABLE_ROWS = 30;
const MAX_LABEL_LENGTH = 24;
const MAX_CHARTS = 6;
const PER_KIND = 2;

/** Names of identifiers and counters: their sums and histograms say nothing. */
export const ID_NAME = /^(id|rowid|oid|_rowid_|number|index|idx|seq|nonce)$|_(id|number|index|idx|seq|no)$/i;

const CURRENCIES = "usd|usdc|usdt|dai|eur|gbp|jpy|chf|cad|aud|cny|inr|brl|eth|weth|wei|gwei|btc|sats?";
const NAMES_CURRENCY = `(^|_)(${CURRENCIES})($|_)`;

export interface MeasureRule {
  score: number;
  why: string;
  /** Matches columns with a description in the config. */
  described?: true;
  /** Matches columns whose name matches. */
  name?: RegExp;
}

/**
 * Which numeric column is the best measure: the sum of the scores of the rules it matches, highest
 * first (ties in column order). Measures comparable across rows come first: a sum of amounts in
 * a hundred different tokens means nothing.
 */
export const MEASURE_RULES: readonly MeasureRule[] = [
  { score: 2, why: "the seller described it in the config", described: true },
  { score: 3, why: "its name names a currency, so every row is in the same unit", name: new RegExp(NAMES_CURRENCY, "i") },
  {
    score: 2,
    why: "its name is a quantity in one common unit",
    name: /(^|_)(value|price|volume|size|notional|revenue|cost|fees?|balance|bps|pct|percent|ratio|rate|duration|latency|ms|seconds|bytes|gas|weight|score)($|_)/i,
  },
  {
    score: -3,
    why: "a raw amount without a currency may be in a different unit on every row (e.g. per token)",
    name: new RegExp(`^(?!.*${NAMES_CURRENCY}).*(^|_)(amount|amt|qty|quantity)($|_)`, "i"),
  },
];

/** Values that average rather than add up: charted as a mean per interval, not a sum. */
export const MEAN_NAME =
  /(^|_)(price|rate|ratio|pct|percent|bps|avg|average|mean|median|apr|apy|yield|temperature|score|latency|duration|utilization|share)($|_)|_per_/i;

export function measureScore(column: PlanInputColumn): number {
  let score = 0;
  for (const rule of MEASURE_RULES) {
    if ((rule.described && column.description) || rule.name?.test(column.name)) score += rule.score;
  }
  return score;
}

/** Charted as numbers: integers, floats and decimals of every width (a list never is). */
function isNumeric(kind: ArrowKind): boolean {
  return isInteger(kind) || kind === "float32" || kind === "float64" || kind === "decimal128";
}

function isInteger(kind: ArrowKind): boolean {
  return kind === "int16" || kind === "int32" || kind === "int64";
}

type Indexed = PlanInputColumn & { index: number };

interface Roles {
  time: Indexed | undefined;
  measures: Indexed[];
  categories: Indexed[];
}

function assignRoles(columns: PlanInputColumn[], rows: unknown[][]): Roles {
  const indexed = columns.map((column, index) => ({ ...column, index }));
  const time = indexed.find((c) => isTimeKind(c.kind));
  const times = time ? rows.map((row) => timeMs(time.kind, row[time.index])) : [];
  const measures: Indexed[] = [];
  const categories: Indexed[] = [];
  for (const c of indexed) {
    const repeats = (limit: number) => {
      const { distinct, values } = distinctValues(rows, c.index, limit);
      // Categories must repeat (on average twice or more): a bar per unique label says nothing.
      return distinct > 1 && distinct <= limit && distinct * 2 <= values;
    };
    if (c.kind === "utf8" || c.kind === "bool") {
      if (repeats(MAX_CATEGORIES)) categories.push(c);
      continue;
    }
    if (!isNumeric(c.kind)) continue;
    if (isInteger(c.kind) && repeats(MAX_NUMBER_CATEGORIES)) {
      categories.push(c);
      continue;
    }
    if (c.rowidAlias || ID_NAME.test(c.name)) continue;
    // A constant or all-null column draws a single bar.
    if (distinctValues(rows, c.index, 1).distinct <= 1) continue;
    if (time && isMonotonicWithTime(times, rows.map((row) => numberOf(row[c.index], c)))) continue;
    measures.push(c);
  }
  // Stable: equal scores keep the column order.
  measures.sort((a, b) => measureScore(b) - measureScore(a));
  return { time, measures, categories };
}

/** The first text column naming every row uniquely with a short label (a symbol, a name). */
function labelColumn(columns: Indexed[], rows: unknown[][]): Indexed | undefined {
  return columns.find((c) => {
    if (c.kind !== "utf8") return false;
    const labels = rows.map((row) => row[c.index]);
    return (
      labels.every((l) => typeof l === "string" && l.length > 0 && l.length <= MAX_LABEL_LENGTH) &&
      new Set(labels).size === labels.length
    );
  });
}

/** `rows` are the snapshot's values as the engine sampled them (TableEngine `sample`), in column order. */
export function planCharts(columns: PlanInputColumn[], rows: unknown[][]): ChartSpec[] {
  const { time, measures, categories } = assignRoles(columns, rows);
  const charts: ChartSpec[] = [];
  const span = time ? timeSpanOf(time.kind, rows.map((row) => row[time.index])) : null;
  if (time && span && span.count >= MIN_VALUES_TO_CHART && span.to > span.from) {
    const interval = intervalFor(span);
    charts.push({ kind: "time", x: time.name, y: null, reduce: "count", interval, title: `Rows per ${interval}` });
    const best = measures[0];
    if (best) {
      const reduce = MEAN_NAME.test(best.name) ? "mean" : "sum";
      const title = `${reduce === "mean" ? "Mean" : "Sum"} of ${best.name} per ${interval}`;
      charts.push({ kind: "time", x: time.name, y: best.name, reduce, interval, title });
    }
  }
  const label = rows.length <= SMALL_TABLE_ROWS ? labelColumn(columns.map((c, index) => ({ ...c, index })), rows) : undefined;
  for (const c of measures.slice(0, PER_KIND)) {
    const values = numbersOf(rows, c.index, c);
    const log = isSkewedPositive(values);
    if (label) charts.push({ kind: "values", label: label.name, x: c.name, log, title: `${c.name} by ${label.name}` });
    else if (values.length >= MIN_VALUES_TO_CHART) charts.push({ kind: "histogram", x: c.name, log, title: `Distribution of ${c.name}` });
  }
  for (const c of categories.slice(0, PER_KIND)) {
    charts.push({ kind: "bar", y: c.name, title: `Rows by ${c.name}` });
  }
  return charts.slice(0, MAX_CHARTS);
}
