/**
 * `${VAR}` expansion (ARCHITECTURE.md §2) in every string value of the raw config, before validation,
 * so secrets such as facilitator tokens stay out of the file. Keys are never expanded.
 *
 * Syntax: `${NAME}` with NAME = letters, digits and '_' (not starting with a digit). `$${` writes
 * a literal `${` (so `$${HOME}` stays `${HOME}`). A lone `$` not followed by `{` is literal. An unset
 * variable, or a `${` that is not a well-formed reference, is a problem; a variable set to the empty
 * string expands to the empty string.
 */
import { isRecord, type ConfigPath, type Problems } from "./problems.ts";

export type Env = Record<string, string | undefined>;

const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\{/g;

function expandString(text: string, env: Env, path: ConfigPath, problems: Problems): string {
  return text.replace(REFERENCE, (match: string, name: string | undefined) => {
    if (match === "$${") return "${";
    if (name === undefined) {
      problems.add(path, "malformed variable reference; write ${NAME} (letters, digits, _) or $${ for a literal ${");
      return match;
    }
    const value = env[name];
    if (value === undefined) {
      problems.add(path, `environment variable ${name} is not set; set it or remove \${${name}} from the config`);
      return "";
    }
    return value;
  });
}

export function expandEnv(value: unknown, env: Env, path: ConfigPath, problems: Problems): unknown {
  if (typeof value === "string") return expandString(value, env, path, problems);
  if (Array.isArray(value)) return value.map((item, index) => expandEnv(item, env, [...path, index], problems));
  if (isRecord(value)) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a YAML key named __proto__ must stay a plain key.
      Object.defineProperty(result, key, { value: expandEnv(item, env, [...path, key], problems), enumerable: true, writable: true, configurable: true });
    }
    return result;
  }
  return value;
}
