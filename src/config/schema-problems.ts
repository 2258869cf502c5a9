/**
 * Turns TypeBox validation errors into config problems: the YAML path of the value, what is wrong
 * and what to write instead. TypeBox buffers only a few errors by default (Settings.maxErrors = 8);
 * a config check must report every problem at once (ARCHITECTURE.md §1), so the limit is raised for the
 * duration of this synchronous call and restored afterwards.
 */
import type { TSchema } from "typebox";
import { Settings } from "typebox/system";
import { Value } from "typebox/value";
import { describeKind, isRecord, type ConfigPath, type PathSegment, type Problems } from "./problems.ts";

const MAX_SCHEMA_ERRORS = 1000;

const TYPE_HINTS: Record<string, string> = {
  string: "write text (in quotes if it looks like a number or true/false)",
  boolean: "write true or false",
  object: "write a mapping of keys to values",
  array: "write a list",
  integer: "write a whole number",
  number: "write a number",
};

interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

function validationErrors(schema: TSchema, value: unknown): SchemaError[] {
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: MAX_SCHEMA_ERRORS });
  try {
    return Value.Errors(schema, value) as unknown as SchemaError[];
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

function pointerSegments(pointer: string): string[] {
  if (pointer === "" || pointer === "#") return [];
  return pointer
    .replace(/^#?\//, "")
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** Follows an instance pointer through the value; list indexes become numbers in the path. */
function instanceAt(value: unknown, pointer: string): { path: PathSegment[]; found: unknown } {
  const path: PathSegment[] = [];
  let current = value;
  for (const part of pointerSegments(pointer)) {
    if (Array.isArray(current)) {
      path.push(Number(part));
      current = current[Number(part)];
    } else {
      path.push(part);
      current = isRecord(current) ? current[part] : undefined;
    }
  }
  return { path, found: current };
}

function schemaAt(schema: TSchema, pointer: string): Record<string, unknown> {
  let current: unknown = schema;
  for (const part of pointerSegments(pointer)) current = isRecord(current) || Array.isArray(current) ? (current as Record<string, unknown>)[part] : undefined;
  return isRecord(current) ? current : {};
}

function propertiesOf(node: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return isRecord(node.properties) ? (node.properties as Record<string, Record<string, unknown>>) : {};
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length] ?? 0;
}

function unknownKeyMessage(key: string, allowed: string[]): string {
  const lower = key.toLowerCase().replaceAll("-", "_");
  const close = allowed.find((name) => name === lower || editDistance(lower, name) <= 2 || (lower.length >= 4 && name.startsWith(lower)));
  return `unknown key${close === undefined ? "" : ` (did you mean ${close}?)`}; allowed here: ${allowed.join(", ")}`;
}

function typeMessage(found: unknown, node: Record<string, unknown>, expected: unknown): string {
  const hint = typeof node["x-hint"] === "string" ? node["x-hint"] : (TYPE_HINTS[String(expected)] ?? "has the wrong type");
  return `got ${describeKind(found)}; ${hint}`;
}

function messageFor(error: SchemaError, node: Record<string, unknown>, found: unknown): string {
  const { params } = error;
  const hint = typeof node["x-hint"] === "string" ? `; ${node["x-hint"]}` : "";
  switch (error.keyword) {
    case "type":
      return typeMessage(found, node, params.type);
    case "anyOf":
      return typeMessage(found, node, undefined);
    case "pattern":
      return `${describeKind(found)} is not allowed here${hint}`;
    case "minimum":
      return `must be at least ${String(params.limit)}, got ${String(found)}`;
    case "maximum":
      return `must be at most ${String(params.limit)}, got ${String(found)}`;
    case "minLength":
      return `must not be empty${hint}`;
    case "minItems":
      return `must list at least ${String(params.limit)} ${params.limit === 1 ? "entry" : "entries"}`;
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}, got ${describeKind(found)}`;
    default:
      return error.message;
  }
}

/** Adds a problem for every way `value` does not fit `schema`; returns whether it fits. */
export function collectSchemaProblems(schema: TSchema, value: unknown, basePath: ConfigPath, problems: Problems): boolean {
  const errors = validationErrors(schema, value);
  for (const error of errors) {
    // `additionalProperties: false` also yields a "schema is false" error per extra key, and a
    // failed union yields one error per branch: the additionalProperties / anyOf errors say it better.
    if (error.keyword === "boolean" || error.schemaPath.includes("/anyOf/")) continue;
    const { path, found } = instanceAt(value, error.instancePath);
    const where = [...basePath, ...path];
    const node = schemaAt(schema, error.schemaPath);
    if (error.keyword === "required") {
      const properties = propertiesOf(node);
      for (const key of (error.params.requiredProperties as string[] | undefined) ?? []) {
        const description = properties[key]?.description;
        problems.add([...where, key], `is required${typeof description === "string" ? ` (${description})` : ""}`);
      }
    } else if (error.keyword === "additionalProperties") {
      const allowed = Object.keys(propertiesOf(node));
      for (const key of (error.params.additionalProperties as string[] | undefined) ?? []) {
        problems.add([...where, key], unknownKeyMessage(key, allowed));
      }
    } else {
      problems.add(where, messageFor(error, node, found));
    }
  }
  return errors.length === 0;
}
