/**
 * A small Prometheus registry and its text exposition format (version 0.0.4): counters, gauges and
 * histograms with labels, rendered on demand. Counters may hold bigints (revenue in a token's
 * smallest units stays exact, written as plain digits). Label values are escaped as the format
 * requires (backslash, double quote, line feed); HELP text likewise (backslash, line feed).
 */

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Record<string, string>;
type Value = number | bigint;

interface Family {
  render(lines: string[]): void;
}

abstract class Labelled<T> implements Family {
  protected readonly series = new Map<string, { labels: Labels; value: T }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly type: "counter" | "gauge" | "histogram",
    private readonly labelNames: readonly string[],
  ) {}

  protected entry(labels: Labels, initial: () => T): { labels: Labels; value: T } {
    // Called for every request: a plain loop, not map/join.
    let key = "";
    for (const name of this.labelNames) key += `${labels[name] ?? ""}\u0000`;
    let entry = this.series.get(key);
    if (entry === undefined) {
      const own: Labels = {};
      for (const name of this.labelNames) own[name] = labels[name] ?? "";
      entry = { labels: own, value: initial() };
      this.series.set(key, entry);
    }
    return entry;
  }

  render(lines: string[]): void {
    header(lines, this.name, this.help, this.type);
    for (const { labels, value } of this.series.values()) this.renderSeries(lines, labels, value);
  }

  protected abstract renderSeries(lines: string[], labels: Labels, value: T): void;
}

export class Counter extends Labelled<Value> {
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, "counter", labelNames);
  }

  inc(labels: Labels = {}, by: Value = 1): void {
    const entry = this.entry(labels, () => (typeof by === "bigint" ? 0n : 0));
    entry.value = typeof entry.value === "bigint" || typeof by === "bigint" ? BigInt(entry.value) + BigInt(by) : entry.value + by;
  }

  protected renderSeries(lines: string[], labels: Labels, value: Value): void {
    lines.push(sample(this.name, labels, value));
  }
}

/** A gauge whose value is read when rendered (cheap reads only: it runs on every scrape). */
export class Gauge implements Family {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly read: () => number,
    private readonly type: "gauge" | "counter" = "gauge",
    private readonly labels: Labels = {},
  ) {}

  render(lines: string[]): void {
    header(lines, this.name, this.help, this.type);
    lines.push(sample(this.name, this.labels, this.read()));
  }
}

interface Buckets {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Labelled<Buckets> {
  constructor(
    name: string,
    help: string,
    private readonly bounds: readonly number[],
    labelNames: readonly string[] = [],
  ) {
    super(name, help, "histogram", labelNames);
  }

  observe(labels: Labels, value: number): void {
    const entry = this.entry(labels, () => ({ counts: this.bounds.map(() => 0), sum: 0, count: 0 }));
    const buckets = entry.value;
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]!) buckets.counts[i]! += 1;
    buckets.sum += value;
    buckets.count += 1;
  }

  protected renderSeries(lines: string[], labels: Labels, value: Buckets): void {
    this.bounds.forEach((bound, i) => lines.push(sample(`${this.name}_bucket`, { ...labels, le: formatNumber(bound) }, value.counts[i]!)));
    lines.push(sample(`${this.name}_bucket`, { ...labels, le: "+Inf" }, value.count));
    lines.push(sample(`${this.name}_sum`, labels, value.sum));
    lines.push(sample(`${this.name}_count`, labels, value.count));
  }
}

export class Registry {
  private readonly families: Family[] = [];

  add<T extends Family>(family: T): T {
    this.families.push(family);
    return family;
  }

  render(): string {
    const lines: string[] = [];
    for (const family of this.families) family.render(lines);
    return `${lines.join("\n")}\n`;
  }
}

function header(lines: string[], name: string, help: string, type: string): void {
  lines.push(`# HELP ${name} ${help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}`, `# TYPE ${name} ${type}`);
}

function sample(name: string, labels: Labels, value: Value): string {
  const pairs = Object.entries(labels).map(([key, text]) => `${key}="${escapeLabel(text)}"`);
  return `${name}${pairs.length === 0 ? "" : `{${pairs.join(",")}}`} ${typeof value === "bigint" ? value.toString() : formatNumber(value)}`;
}

function escapeLabel(text: string): string {
  return text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function formatNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}
