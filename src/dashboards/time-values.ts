/**
 * Time values of a snapshot, read at generation time the way the Arrow encoder reads them
 * (ARCHITECTURE.md §5): SQLite's ISO-8601 text or Unix seconds for a timestamp, 'YYYY-MM-DD' for a
 * date; the other engines' bigint microseconds (Timestamp(µs), with or without "UTC") and days.
 * The generator uses them to pick a time chart's bin width and to say what span a sample covers.
 */
import { convertValue, Misfit } from "../arrow/fit.ts";
import type { ArrowKind } from "../arrow/types.ts";

/** Plot's interval names (Plot accepts "3 hours", "3 months" and so on). */
export type TimeInterval =
  | "minute" | "5 minutes" | "15 minutes" | "hour" | "3 hours" | "day" | "week" | "month" | "3 months" | "year";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Finest first, with each interval's (average) length. Only intervals that tile a day or a
 * year evenly: 12-hour bins, say, would make a daily rhythm look like a zigzag.
 */
const INTERVALS: readonly [TimeInterval, number][] = [
  ["minute", MINUTE],
  ["5 minutes", 5 * MINUTE],
  ["15 minutes", 15 * MINUTE],
  ["hour", HOUR],
  ["3 hours", 3 * HOUR],
  ["day", DAY],
  ["week", 7 * DAY],
  ["month", 30.44 * DAY],
  ["3 months", 91.31 * DAY],
  ["year", 365.25 * DAY],
];

/** Bars wide enough to see on a phone (about 4 px each at 360 px). */
const MAX_BINS = 90;
/** Fewer sampled rows than this per bin on average, and each bin is mostly noise. */
const MIN_ROWS_PER_BIN = 5;

export function isTimeKind(kind: ArrowKind): boolean {
  return kind === "timestamp" || kind === "date32" || kind === "timestamp_us" || kind === "timestamp_us_utc";
}

/**
 * Epoch milliseconds of a sampled value of a time column, or null when absent or unreadable. A
 * wall-clock Timestamp(µs) without a zone is charted as if it were UTC, as the page's axes are.
 */
export function timeMs(kind: ArrowKind, value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const converted = convertValue(kind, value, true);
  if (converted instanceof Misfit) return null;
  const n = typeof converted === "bigint" ? Number(converted) : converted;
  if (typeof n !== "number" || !Number.isFinite(n)) return null;
  if (kind === "date32") return n * DAY;
  return kind === "timestamp_us" || kind === "timestamp_us_utc" ? n / 1000 : n;
}

export interface TimeSpan {
  from: number;
  to: number;
  /** Rows with a readable time. */
  count: number;
}

export function timeSpanOf(kind: ArrowKind, values: Iterable<unknown>): TimeSpan | null {
  let from = Infinity;
  let to = -Infinity;
  let count = 0;
  for (const value of values) {
    const t = timeMs(kind, value);
    if (t === null) continue;
    count++;
    if (t < from) from = t;
    if (t > to) to = t;
  }
  return count === 0 ? null : { from, to, count };
}

/** The finest interval with at most MAX_BINS bins and MIN_ROWS_PER_BIN rows per bin on average. */
export function intervalFor(span: TimeSpan): TimeInterval {
  const length = span.to - span.from;
  for (const [interval, ms] of INTERVALS) {
    const bins = Math.max(1, Math.ceil(length / ms));
    if (bins <= MAX_BINS && span.count / bins >= MIN_ROWS_PER_BIN) return interval;
  }
  return "year";
}

/** "2026-10-01 → 2026-10-30", with minutes when the span is under two days. */
export function formatSpan(span: Pick<TimeSpan, "from" | "to">): string {
  const withTime = span.to - span.from < 2 * DAY;
  const format = (t: number) => {
    const iso = new Date(t).toISOString();
    return withTime ? iso.slice(0, 16).replace("T", " ") : iso.slice(0, 10);
  };
  return `${format(span.from)} → ${format(span.to)}${withTime ? " UTC" : ""}`;
}
