/**
 * Which charts a scaffolded dashboard draws (DESIGN.md §7). Decided at generation time from the
 * column kinds and the snapshot, written into the page as JSON, and drawn by the browser code:
 *   - a timestamp/date column and a numeric column → the numeric column summed over time;
 *     a time column without numeric columns → rows over time;
 *   - a numeric column → its histogram;
 *   - a text or boolean column with few, repeating values → a bar chart of counts.
 * The time bin (hour, day, week, month) is chosen in the browser from the data's span.
 */
import type { ArrowKind } from "../arrow/types.ts";

export type ChartSpec =
  | { kind: "time"; x: string; y: string | null; title: string }
  | { kind: "histogram"; x: string; title: string }
  | { kind: "bar"; y: string; title: string };

export interface PlanColumn {
  name: string;
  kind: ArrowKind;
}

/** What the browser code needs: read from `<script id="dashboard-plan">`. */
export interface DashboardPlan {
  snapshotUrl: string;
  columns: PlanColumn[];
  charts: ChartSpec[];
  /** Rows shown in the preview table (after sorting the whole snapshot). */
  previewRows: number;
}

export const MAX_CATEGORIES = 20;
const MAX_CHARTS = 6;
const PER_KIND = 2;

const ID_LIKE = /^(id|rowid|oid|_rowid_)$|_id$/i;

function isNumeric(kind: ArrowKind): boolean {
  return kind === "int64" || kind === "float64";
}

/** Distinct non-null values (counting stops past `stopAfter`) and the number of non-null values. */
function distinctValues(rows: unknown[][], index: number, stopAfter: number): { distinct: number; values: number } {
  const seen = new Set<unknown>();
  let values = 0;
  for (const row of rows) {
    const value = row[index];
    if (value === null || value === undefined) continue;
    values++;
    if (seen.size <= stopAfter) seen.add(typeof value === "bigint" ? value.toString() : value);
  }
  return { distinct: seen.size, values };
}

/** `rows` are the snapshot's rows, in column order. */
export function planCharts(columns: PlanColumn[], rows: unknown[][]): ChartSpec[] {
  const indexed = columns.map((column, index) => ({ ...column, index }));
  const time = indexed.find((c) => c.kind === "timestamp" || c.kind === "date32");
  // An identifier's histogram says nothing; a constant column draws a single bar.
  const numeric = indexed.filter(
    (c) => isNumeric(c.kind) && !ID_LIKE.test(c.name) && distinctValues(rows, c.index, 1).distinct > 1,
  );
  const categorical = indexed.filter((c) => {
    if (c.kind !== "utf8" && c.kind !== "bool") return false;
    const { distinct, values } = distinctValues(rows, c.index, MAX_CATEGORIES);
    // Categories must repeat (on average twice or more): a bar per unique label says nothing.
    return distinct > 1 && distinct <= MAX_CATEGORIES && distinct * 2 <= values;
  });

  const charts: ChartSpec[] = [];
  if (time) {
    if (numeric.length === 0) charts.push({ kind: "time", x: time.name, y: null, title: `Rows over time (${time.name})` });
    for (const c of numeric.slice(0, PER_KIND)) {
      charts.push({ kind: "time", x: time.name, y: c.name, title: `${c.name} over time` });
    }
  }
  for (const c of numeric.slice(0, PER_KIND)) {
    charts.push({ kind: "histogram", x: c.name, title: `Distribution of ${c.name}` });
  }
  for (const c of categorical.slice(0, PER_KIND)) {
    charts.push({ kind: "bar", y: c.name, title: `Rows by ${c.name}` });
  }
  return charts.slice(0, MAX_CHARTS);
}
