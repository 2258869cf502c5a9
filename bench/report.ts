/**
 * The benchmark's result: one check per target (figure, baseline, ratio, target, pass or miss),
 * tables of figures without a target, and every other measured figure, printed as tables and
 * written to BENCHMARKS.md.
 */

export interface Check {
  item: string;
  figure: string;
  measured: string;
  baseline: string;
  /** measured / baseline, or null for an absolute target. */
  ratio: number | null;
  target: string;
  pass: boolean;
}

export interface Detail {
  item: string;
  name: string;
  value: string;
}

/** A table of figures with no target (e.g. compression), printed under its title. */
export interface FigureTable {
  title: string;
  /** Header row first. */
  rows: string[][];
}

export interface SectionResult {
  checks: Check[];
  details: Detail[];
  tables?: FigureTable[];
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 0)} ms`;
export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
export const ratio = (value: number | null) => (value === null ? "—" : `${value.toFixed(2)}×`);
export const runsOf = (values: number[], format: (v: number) => string) => values.map(format).join(", ");

/**
 * The ratio as printed next to its target: two decimals, or three when two would round it onto the
 * target's own number (a 0.496× miss must not read "0.50×" against "≥ 0.50×").
 */
function ratioAgainst(value: number | null, target: string): string {
  if (value === null) return ratio(value);
  const bound = /(\d+\.\d+)×/.exec(target)?.[1];
  return bound !== undefined && value.toFixed(2) === bound && value !== Number(bound) ? `${value.toFixed(3)}×` : ratio(value);
}

export function checksTable(checks: Check[]): string[][] {
  return [
    ["#", "figure", "measured", "baseline", "ratio", "target", "result"],
    ...checks.map((c) => [c.item, c.figure, c.measured, c.baseline, ratioAgainst(c.ratio, c.target), c.target, c.pass ? "pass" : "miss"]),
  ];
}

/** Plain-text table for the terminal. */
export function textTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

export function markdownTable(rows: string[][]): string {
  const line = (row: string[]) => `| ${row.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`;
  return [line(rows[0]!), line(rows[0]!.map(() => "---")), ...rows.slice(1).map(line)].join("\n");
}

export function detailsTable(details: Detail[]): string[][] {
  return [["#", "figure", "value"], ...details.map((d) => [d.item, d.name, d.value])];
}
