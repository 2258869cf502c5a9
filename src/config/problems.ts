/**
 * Config problems: every one carries the path of the offending value in the YAML, written the way
 * a user reads the file (`tables[1].price_tags[0].amount_per_item`), so `arrow402 validate` can list
 * them all at once (ARCHITECTURE.md §1, §2).
 */

export type PathSegment = string | number;
export type ConfigPath = readonly PathSegment[];

/** Keys that read unambiguously after a dot; anything else is written as `["key"]`. */
const PLAIN_KEY = /^[A-Za-z0-9_/-]+$/;

export function formatPath(path: ConfigPath): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (!PLAIN_KEY.test(segment)) text += `[${JSON.stringify(segment)}]`;
    else text += text === "" ? segment : `.${segment}`;
  }
  return text === "" ? "(top level)" : text;
}

/** Collects problems in the order they are found; duplicates are dropped. */
export class Problems {
  readonly list: string[] = [];

  add(path: ConfigPath, message: string): void {
    const line = `${formatPath(path)}: ${message}`;
    if (!this.list.includes(line)) this.list.push(line);
  }

  get isEmpty(): boolean {
    return this.list.length === 0;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Describes a YAML value's kind for messages ("got a number"). */
export function describeKind(value: unknown): string {
  if (value === null || value === undefined) return "an empty value";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "string") return `the text ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}
