/**
 * The Prometheus registry writes what a strict reader of the text format accepts (labels and help
 * escaped, histograms cumulative with +Inf equal to the count, bigints as exact digits), and the
 * strict reader used by the metrics tests refuses what a scraper could misread.
 */
import { describe, expect, test } from "bun:test";
import { Counter, Gauge, Histogram, Registry } from "../../src/ops/prometheus.ts";
import { parseExposition } from "./exposition.ts";

describe("the registry", () => {
  test("counters with hostile label values and help text come back exactly", () => {
    const registry = new Registry();
    const counter = registry.add(new Counter("demo_total", 'Help with a \\ backslash\nand a "quote".', ["table"]));
    const hostile = 'a"b\\c\nd}{,=';
    counter.inc({ table: hostile });
    counter.inc({ table: hostile }, 2);
    counter.inc({ table: "plain" });
    const parsed = parseExposition(registry.render());
    expect(parsed.value("demo_total", { table: hostile })).toBe(3);
    expect(parsed.value("demo_total", { table: "plain" })).toBe(1);
    expect(parsed.help.get("demo_total")).toBe('Help with a \\ backslash\nand a "quote".');
    expect(parsed.types.get("demo_total")).toBe("counter");
  });

  test("bigint counters stay exact beyond 2^53", () => {
    const registry = new Registry();
    const revenue = registry.add(new Counter("revenue_total", "Smallest units.", ["asset"]));
    revenue.inc({ asset: "x" }, 9_007_199_254_740_993n);
    revenue.inc({ asset: "x" }, 1000n);
    const sample = parseExposition(registry.render()).samples.find((s) => s.name === "revenue_total")!;
    expect(sample.text).toBe("9007199254741993");
  });

  test("histograms are cumulative, end with +Inf equal to the count, and sum what was observed", () => {
    const registry = new Registry();
    const histogram = registry.add(new Histogram("latency_seconds", "Latency.", [0.1, 1, 10], ["route"]));
    for (const value of [0.05, 0.1, 0.5, 2, 20]) histogram.observe({ route: "/a" }, value);
    const parsed = parseExposition(registry.render());
    const bucket = (le: string) => parsed.value("latency_seconds_bucket", { route: "/a", le });
    expect([bucket("0.1"), bucket("1"), bucket("10"), bucket("+Inf")]).toEqual([2, 3, 4, 5]);
    expect(parsed.value("latency_seconds_count", { route: "/a" })).toBe(5);
    expect(parsed.value("latency_seconds_sum", { route: "/a" })).toBeCloseTo(22.65, 10);
  });

  test("gauges are read at render time", () => {
    let level = 1;
    const registry = new Registry();
    registry.add(new Gauge("level", "A level.", () => level));
    expect(parseExposition(registry.render()).value("level")).toBe(1);
    level = 7;
    expect(parseExposition(registry.render()).value("level")).toBe(7);
  });
});

describe("the strict reader refuses", () => {
  const valid = "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n";
  test("a valid text", () => {
    expect(parseExposition(valid).value("a_total")).toBe(1);
  });
  test.each([
    ["no final line feed", valid.slice(0, -1)],
    ["a sample before its TYPE", "a_total 1\n# TYPE a_total counter\n"],
    ["a duplicate series", `${valid}a_total 2\n`],
    ["a family split apart", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n"],
    ["an unknown escape in a label", '# TYPE a gauge\na{x="\\t"} 1\n'],
    ["an unterminated label", '# TYPE a gauge\na{x="1} 1\n'],
    ["a label name with a dash", '# TYPE a gauge\na{x-y="1"} 1\n'],
    ["a value that is not a number", "# TYPE a gauge\na one\n"],
    ["two spaces before the value", "# TYPE a gauge\na  1\n"],
    ["a negative counter", "# TYPE a_total counter\na_total -1\n"],
    ["an empty line", `${valid}\n`],
    ["buckets that are not cumulative", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'],
    ["a +Inf bucket that is not the count", '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n'],
  ])("%s", (_name, text) => {
    expect(() => parseExposition(text)).toThrow();
  });
});
