import { describe, expect, test } from "bun:test";
import { measureScore, planCharts, type ChartSpec, type PlanInputColumn } from "../../src/dashboards/chart-plan.ts";

const rows = (n: number, make: (i: number) => unknown[]) => Array.from({ length: n }, (_, i) => make(i));
const HOUR = 3_600_000;
const START = Date.UTC(2026, 0, 1);
const at = (ms: number) => new Date(START + ms).toISOString();
/** A fixed-seed generator, so "random" columns are the same on every run. */
function seeded(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
}
const kinds = (charts: ChartSpec[]) => charts.map((c) => c.kind);
const measuresOf = (charts: ChartSpec[]) =>
  charts.flatMap((c) => (c.kind === "histogram" ? [c.x] : c.kind === "time" && c.y !== null ? [c.y] : []));

describe("identifiers and counters are not measures", () => {
  const random = seeded(7);
  // The identifier is shuffled against time, so only its name (or being the rowid) can rule it out.
  const data = rows(200, (i) => [BigInt(((i * 37) % 200) + 1), at(i * HOUR), BigInt(1000 + i * 3), BigInt(i), 40 + random() * 10]);
  test.each([
    ["the INTEGER PRIMARY KEY (rowid alias), whatever its name", "key", { rowidAlias: true }],
    ["a column named id", "id", {}],
    ["a name ending in _id", "user_id", {}],
    ["a name ending in _number", "block_number", {}],
    ["a name ending in _index", "log_index", {}],
  ])("%s", (_, name, extra) => {
    const columns: PlanInputColumn[] = [
      { name, kind: "int64", ...extra },
      { name: "t", kind: "timestamp" },
      { name: "height", kind: "int64" },
      { name: "seq_b", kind: "int64" },
      { name: "temperature", kind: "float64" },
    ];
    const charts = planCharts(columns, data);
    expect(measuresOf(charts)).not.toContain(name);
    // `height` and `seq_b` only grow with `t`: counters too, whatever their names.
    expect(measuresOf(charts)).not.toContain("height");
    expect(measuresOf(charts)).not.toContain("seq_b");
    expect(measuresOf(charts)).toContain("temperature");
  });

  test("a column that only falls with time is a counter too; one that wanders is not", () => {
    const columns: PlanInputColumn[] = [
      { name: "t", kind: "timestamp" },
      { name: "remaining", kind: "int64" },
      { name: "level", kind: "float64" },
    ];
    const random = seeded(3);
    const charts = planCharts(columns, rows(100, (i) => [at(i * HOUR), BigInt(10_000 - i * 7), 5 + random()]));
    expect(measuresOf(charts)).toEqual(["level", "level"]);
  });

  test("identifiers, constant and all-null columns are not charted", () => {
    const columns: PlanInputColumn[] = [
      { name: "user_id", kind: "int64" },
      { name: "constant", kind: "float64" },
      { name: "empty", kind: "float64" },
      { name: "kind", kind: "utf8" },
    ];
    expect(planCharts(columns, rows(20, (i) => [BigInt(i), 1, null, null]))).toEqual([]);
  });
});

describe("measures comparable across rows come first", () => {
  test.each([
    ["amount_usd", {}, 3],
    ["amount_usd", { description: "Trade size in US dollars" }, 5],
    ["price", {}, 2],
    ["gas_used", {}, 2],
    ["value_eth", {}, 5],
    ["temperature", {}, 0],
    ["amount_in", {}, -3],
    ["qty", {}, -3],
    ["amount_in", { description: "Tokens sold, in the token's units" }, -1],
  ])("%s %o scores %d", (name, extra, score) => {
    expect(measureScore({ name, kind: "float64", ...extra })).toBe(score);
  });

  test("the best measure is charted over time and first among the histograms", () => {
    const columns: PlanInputColumn[] = [
      { name: "t", kind: "timestamp" },
      { name: "amount_in", kind: "float64" },
      { name: "amount_out", kind: "float64" },
      { name: "gas_used", kind: "int64" },
      { name: "size", kind: "float64", description: "Notional in dollars" },
    ];
    const random = seeded(11);
    const charts = planCharts(columns, rows(300, (i) => [at(i * HOUR), random(), random(), BigInt(Math.floor(random() * 1e5)), 10 + random()]));
    expect(charts.slice(0, 4)).toEqual([
      { kind: "time", x: "t", y: null, reduce: "count", interval: "day", title: "Rows per day" },
      { kind: "time", x: "t", y: "size", reduce: "sum", interval: "day", title: "Sum of size per day" },
      { kind: "histogram", x: "size", log: false, title: "Distribution of size" },
      { kind: "histogram", x: "gas_used", log: false, title: "Distribution of gas_used" },
    ]);
  });
});

describe("time charts", () => {
  const columns: PlanInputColumn[] = [
    { name: "at", kind: "timestamp" },
    { name: "price", kind: "float64" },
  ];
  test.each([
    ["an hour of rows 10 seconds apart", 360, 10_000, "minute"],
    ["2 hours of rows a minute apart", 120, 60_000, "5 minutes"],
    ["3 days of rows 5 minutes apart", 864, 300_000, "hour"],
    ["6 days of rows 7 minutes apart", 1234, 420_000, "3 hours"],
    ["30 days of rows 10 minutes apart", 4320, 600_000, "day"],
    ["a year of daily rows", 365, 24 * HOUR, "week"],
    ["3 years of daily rows", 1095, 24 * HOUR, "month"],
    ["20 years of daily rows", 7300, 24 * HOUR, "3 months"],
  ])("%s: the finest bins, at most 90 of them with 5 rows or more each on average, are per %s", (_, n, step, interval) => {
    const charts = planCharts(columns, rows(n, (i) => [at(i * step), 100 + (i % 17)]));
    expect(charts[0]).toMatchObject({ kind: "time", y: null, reduce: "count", interval });
    // A price averages rather than adds up.
    expect(charts[1]).toMatchObject({ kind: "time", y: "price", reduce: "mean", title: `Mean of price per ${interval}` });
  });

  test("dates and Unix seconds are read like the Arrow encoder reads them", () => {
    const byDay = planCharts([{ name: "day", kind: "date32" }], rows(600, (i) => [at(Math.floor(i / 10) * 24 * HOUR).slice(0, 10)]));
    expect(byDay).toEqual([{ kind: "time", x: "day", y: null, reduce: "count", interval: "day", title: "Rows per day" }]);
    const bySeconds = planCharts([{ name: "ts", kind: "timestamp" }], rows(600, (i) => [BigInt(START / 1000 + i * 360)]));
    expect(bySeconds[0]).toMatchObject({ interval: "hour" });
  });

  test("too few timed rows draw no time chart", () => {
    const charts = planCharts([{ name: "day", kind: "date32" }, { name: "label", kind: "utf8" }], rows(10, (i) => [`2026-01-0${(i % 9) + 1}`, `u${i}`]));
    expect(charts).toEqual([]);
  });
});

describe("histograms", () => {
  test("skewed positive data is drawn on a log scale; even or signed data is not", () => {
    const columns: PlanInputColumn[] = [
      { name: "size_usd", kind: "float64" },
      { name: "pnl_usd", kind: "float64" },
    ];
    const random = seeded(5);
    const data = rows(500, () => [Math.exp(3 + random() * 8), Math.exp(3 + random() * 8) * (random() < 0.5 ? -1 : 1)]);
    expect(planCharts(columns, data)).toEqual([
      { kind: "histogram", x: "size_usd", log: true, title: "Distribution of size_usd" },
      { kind: "histogram", x: "pnl_usd", log: false, title: "Distribution of pnl_usd" },
    ]);
    const even = planCharts([{ name: "size_usd", kind: "float64" }], rows(500, () => [1 + random() * 100]));
    expect(even).toEqual([{ kind: "histogram", x: "size_usd", log: false, title: "Distribution of size_usd" }]);
  });
});

describe("bar charts", () => {
  test("text, booleans and few-valued integers with repeating values get bars; unique or many values do not", () => {
    const columns: PlanInputColumn[] = [
      { name: "pair", kind: "utf8" },
      { name: "hash", kind: "utf8" },
      { name: "many", kind: "utf8" },
      { name: "ok", kind: "bool" },
    ];
    const charts = planCharts(columns, rows(100, (i) => [["a", "b", "c"][i % 3], `h${i}`, `m${i % 40}`, i % 2 === 0]));
    expect(charts).toEqual([
      { kind: "bar", y: "pair", title: "Rows by pair" },
      { kind: "bar", y: "ok", title: "Rows by ok" },
    ]);
    const tiers = planCharts([{ name: "fee_bps", kind: "int64" }], rows(100, (i) => [[1n, 5n, 30n, 100n][i % 4]]));
    expect(tiers).toEqual([{ kind: "bar", y: "fee_bps", title: "Rows by fee_bps" }]);
  });
});

describe("small tables", () => {
  test("chart the best measure per row, by the first unique short label", () => {
    const columns: PlanInputColumn[] = [
      { name: "symbol", kind: "utf8" },
      { name: "name", kind: "utf8" },
      { name: "decimals", kind: "int64" },
      { name: "price_usd", kind: "float64" },
    ];
    const prices = [3150.25, 1, 1, 0.9998, 97250, 1.12, 0.0091, 0.087];
    const charts = planCharts(columns, prices.map((p, i) => [`T${i}`, `Token number ${i}`, i % 3 === 0 ? 6n : 18n, p]));
    expect(charts).toEqual([
      { kind: "values", label: "symbol", x: "price_usd", log: true, title: "price_usd by symbol" },
      { kind: "bar", y: "decimals", title: "Rows by decimals" },
    ]);
  });
});

test("at most six charts", () => {
  const columns: PlanInputColumn[] = [
    { name: "t", kind: "timestamp" },
    ...["a", "b", "c"].map((name) => ({ name, kind: "float64" as const })),
    ...["x", "y", "z"].map((name) => ({ name, kind: "utf8" as const })),
  ];
  const random = seeded(9);
  const charts = planCharts(columns, rows(60, (i) => [at(i * HOUR), random(), random(), random(), `x${i % 2}`, `y${i % 3}`, `z${i % 4}`]));
  expect(kinds(charts)).toEqual(["time", "time", "histogram", "histogram", "bar", "bar"]);
});
