/**
 * What the chart plan learns from a snapshot's values (TableEngine `sample`: SQLite's as stored,
 * INTEGERs as bigints; the other engines' as COLUMN-TYPES has them, a decimal as its unscaled
 * bigint): how many distinct values a column has, whether it only ever grows with time (a
 * counter), and whether its positive values are skewed enough to need a log scale.
 */
import type { ColumnType } from "../arrow/types.ts";
import { decimalText } from "../formats/decimal.ts";

/** Distinct non-null values (counting stops past `stopAfter`) and the number of non-null values. */
export function distinctValues(rows: unknown[][], index: number, stopAfter: number): { distinct: number; values: number } {
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

/**
 * A finite number for a numeric value, else null. A decimal is its exact value (the unscaled bigint
 * at the column's scale) as the nearest double: exact values stay in the snapshot, charts need numbers.
 */
export function numberOf(value: unknown, type?: Pick<ColumnType, "kind" | "scale">): number | null {
  if (typeof value === "bigint") return type?.kind === "decimal128" ? Number(decimalText(value, type.scale ?? 0)) : Number(value);
  if (typeof value === "number" && Number.isFinite(value)) return value;
  return null;
}

export function numbersOf(rows: unknown[][], index: number, type?: Pick<ColumnType, "kind" | "scale">): number[] {
  const numbers: number[] = [];
  for (const row of rows) {
    const n = numberOf(row[index], type);
    if (n !== null) numbers.push(n);
  }
  return numbers;
}

/** Fewer pairs than this, or fewer distinct values, and an ordering says nothing. */
const MIN_MONOTONIC_EVIDENCE = 10;

/**
 * True when the values never go down (or never go up) as time goes on: a block number, a
 * sequence, a running total. Summing or binning such a counter says nothing about the data.
 * `times` are epoch milliseconds (null when absent), one per row.
 */
export function isMonotonicWithTime(times: (number | null)[], values: (number | null)[]): boolean {
  const pairs: [number, number][] = [];
  times.forEach((t, i) => {
    const v = values[i];
    if (t !== null && v !== null && v !== undefined) pairs.push([t, v]);
  });
  if (pairs.length < MIN_MONOTONIC_EVIDENCE) return false;
  if (new Set(pairs.map(([, v]) => v)).size < 3) return false;
  const rising = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const falling = [...pairs].sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const never = (sorted: [number, number][], wrong: (previous: number, next: number) => boolean) =>
    sorted.every(([, v], i) => i === 0 || !wrong(sorted[i - 1]![1], v));
  return never(rising, (p, n) => n < p) || never(falling, (p, n) => n > p);
}

/** max/median at or above this (all values positive) and a linear axis shows one spike. */
export const SKEW_RATIO = 20;

export function median(sorted: number[]): number {
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Positive values whose largest is SKEW_RATIO times the median or more: drawn on a log scale. */
export function isSkewedPositive(values: number[]): boolean {
  if (values.length === 0) return false;
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted[0]! <= 0) return false;
  return sorted.at(-1)! / median(sorted) >= SKEW_RATIO;
}
