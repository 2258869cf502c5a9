/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for the tests: it
 * refuses anything a scraper could misread — a sample before its family's TYPE, families split
 * apart, a duplicate series, a malformed label or escape, a bad number, a histogram whose buckets
 * are not cumulative or whose +Inf bucket is not its count — and gives back the samples by series.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The value exactly as written (counters in smallest token units are compared as digits). */
  text: string;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
  /** The value of one series; undefined when absent. Labels must match exactly. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum over every series of `name` whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const NUMBER = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

export function parseExposition(text: string): Exposition {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a line feed");
  const lines = text.slice(0, -1).split("\n");
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  const finished = new Set<string>();
  let family: string | null = null;

  const enter = (name: string, where: string) => {
    if (family === name) return;
    if (finished.has(name)) throw new Error(`${where}: family ${name} appears again after other families`);
    if (family !== null) finished.add(family);
    family = name;
  };

  lines.forEach((line, index) => {
    const where = `line ${index + 1} ${JSON.stringify(line)}`;
    if (line === "") throw new Error(`${where}: empty line`);
    if (line.startsWith("#")) {
      const match = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (match === null) throw new Error(`${where}: a comment must be # HELP or # TYPE`);
      const [, kind, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      enter(name, where);
      if (kind === "HELP") {
        if (help.has(name)) throw new Error(`${where}: second HELP`);
        if (/\\[^\\n]/.test(rest.replaceAll("\\\\", ""))) throw new Error(`${where}: bad escape in HELP`);
        help.set(name, rest.replaceAll("\\n", "\n").replaceAll("\\\\", "\\"));
      } else {
        if (types.has(name)) throw new Error(`${where}: second TYPE`);
        if (samples.some((sample) => familyOf(sample.name, types) === name)) throw new Error(`${where}: TYPE after samples`);
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        types.set(name, rest);
      }
      return;
    }
    const sample = parseSample(line, where);
    const owner = familyOf(sample.name, types);
    if (owner === undefined) throw new Error(`${where}: sample without a TYPE line before it`);
    enter(owner, where);
    const key = seriesKey(sample.name, sample.labels);
    if (seen.has(key)) throw new Error(`${where}: duplicate series`);
    seen.add(key);
    if (types.get(owner) === "counter" && !(sample.value >= 0)) throw new Error(`${where}: a counter must be a non-negative number`);
    samples.push(sample);
  });
  for (const [name, type] of types) if (type === "histogram") checkHistogram(name, samples);

  const matches = (sample: Sample, labels: Record<string, string>) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value);
  return {
    types,
    help,
    samples,
    value: (name, labels = {}) => samples.find((sample) => sample.name === name && seriesKey(name, sample.labels) === seriesKey(name, labels))?.value,
    sum: (name, labels = {}) => samples.filter((sample) => sample.name === name && matches(sample, labels)).reduce((total, sample) => total + sample.value, 0),
  };
}

function parseSample(line: string, where: string): Sample {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
  if (name === undefined) throw new Error(`${where}: bad metric name`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith("{")) {
    rest = rest.slice(1);
    while (!rest.startsWith("}")) {
      const match = /^([^=]*)="/.exec(rest);
      if (match === null || !LABEL_NAME.test(match[1]!)) throw new Error(`${where}: bad label`);
      if (match[1]! in labels) throw new Error(`${where}: label ${match[1]} twice`);
      rest = rest.slice(match[0].length);
      let value = "";
      for (;;) {
        const char = rest[0];
        if (char === undefined) throw new Error(`${where}: unterminated label value`);
        if (char === '"') break;
        if (char === "\n") throw new Error(`${where}: raw line feed in a label value`);
        if (char === "\\") {
          const escaped = rest[1];
          if (escaped === "\\" || escaped === '"') value += escaped;
          else if (escaped === "n") value += "\n";
          else throw new Error(`${where}: bad escape \\${escaped}`);
          rest = rest.slice(2);
        } else {
          value += char;
          rest = rest.slice(1);
        }
      }
      labels[match[1]!] = value;
      rest = rest.slice(1);
      if (rest.startsWith(",")) rest = rest.slice(1);
      else if (!rest.startsWith("}")) throw new Error(`${where}: expected , or } after a label`);
    }
    rest = rest.slice(1);
  }
  const fields = rest.split(" ");
  if (fields[0] !== "" || fields.length < 2 || fields.length > 3) throw new Error(`${where}: expected one space, a value and an optional timestamp`);
  const text = fields[1]!;
  if (!NUMBER.test(text)) throw new Error(`${where}: ${text} is not a number`);
  if (fields[2] !== undefined && !/^-?\d+$/.test(fields[2])) throw new Error(`${where}: bad timestamp`);
  const value = text === "+Inf" ? Infinity : text === "-Inf" ? -Infinity : Number(text);
  return { name, labels, value, text };
}

function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : null;
    if (base !== null && (types.get(base) === "histogram" || types.get(base) === "summary")) return base;
  }
  return undefined;
}

function seriesKey(name: string, labels: Record<string, string>): string {
  return `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
}

function checkHistogram(name: string, samples: Sample[]): void {
  const groups = new Map<string, { le: number; count: number }[]>();
  for (const sample of samples.filter((s) => s.name === `${name}_bucket`)) {
    const { le, ...rest } = sample.labels;
    if (le === undefined) throw new Error(`${name}_bucket without le`);
    const key = seriesKey(name, rest);
    groups.set(key, [...(groups.get(key) ?? []), { le: le === "+Inf" ? Infinity : Number(le), count: sample.value }]);
  }
  for (const [key, buckets] of groups) {
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]!.le > buckets[i - 1]!.le)) throw new Error(`${key}: bucket bounds not increasing`);
      if (buckets[i]!.count < buckets[i - 1]!.count) throw new Error(`${key}: buckets not cumulative`);
    }
    const last = buckets.at(-1)!;
    if (last.le !== Infinity) throw new Error(`${key}: no +Inf bucket`);
    const labels = JSON.parse(key.slice(name.length)) as [string, string][];
    const count = samples.find((s) => s.name === `${name}_count` && seriesKey(name, s.labels) === seriesKey(name, Object.fromEntries(labels)));
    if (count?.value !== last.count) throw new Error(`${key}: +Inf bucket ${last.count} is not _count ${count?.value}`);
  }
}
