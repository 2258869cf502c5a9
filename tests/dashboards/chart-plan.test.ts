import { expect, test } from "bun:test";
import { planCharts, type PlanColumn } from "../../src/dashboards/chart-plan.ts";

const rows = (n: number, make: (i: number) => unknown[]) => Array.from({ length: n }, (_, i) => make(i));

test("a time column and numeric columns chart the numbers over time, then their histograms", () => {
  const columns: PlanColumn[] = [
    { name: "id", kind: "int64" },
    { name: "at", kind: "timestamp" },
    { name: "price", kind: "float64" },
    { name: "volume", kind: "int64" },
  ];
  const charts = planCharts(columns, rows(50, (i) => [BigInt(i), `2026-01-01T00:${i}:00Z`, i * 1.5, BigInt(i % 7)]));
  expect(charts).toEqual([
    { kind: "time", x: "at", y: "price", title: "price over time" },
    { kind: "time", x: "at", y: "volume", title: "volume over time" },
    { kind: "histogram", x: "price", title: "Distribution of price" },
    { kind: "histogram", x: "volume", title: "Distribution of volume" },
  ]);
});

test("a date column without numbers charts rows over time", () => {
  const charts = planCharts([{ name: "day", kind: "date32" }, { name: "label", kind: "utf8" }], rows(10, (i) => [`2026-01-0${i % 9 + 1}`, `u${i}`]));
  expect(charts).toEqual([{ kind: "time", x: "day", y: null, title: "Rows over time (day)" }]);
});

test("text with few repeating values gets a bar chart; unique or many values do not", () => {
  const columns: PlanColumn[] = [
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
});

test("identifiers, constant and all-null columns are not charted", () => {
  const columns: PlanColumn[] = [
    { name: "user_id", kind: "int64" },
    { name: "constant", kind: "float64" },
    { name: "empty", kind: "float64" },
    { name: "kind", kind: "utf8" },
  ];
  expect(planCharts(columns, rows(20, (i) => [BigInt(i), 1, null, null]))).toEqual([]);
});

test("at most six charts", () => {
  const columns: PlanColumn[] = [
    { name: "t", kind: "timestamp" },
    ...["a", "b", "c"].map((name) => ({ name, kind: "float64" as const })),
    ...["x", "y", "z"].map((name) => ({ name, kind: "utf8" as const })),
  ];
  const charts = planCharts(columns, rows(60, (i) => [i, i, i * 2, i * 3, `x${i % 2}`, `y${i % 3}`, `z${i % 4}`]));
  expect(charts).toHaveLength(6);
  expect(charts.map((c) => c.kind)).toEqual(["time", "time", "histogram", "histogram", "bar", "bar"]);
});
