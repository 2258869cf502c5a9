/**
 * Content negotiation (ARCHITECTURE.md §13): `?format=` (for clients that cannot set headers) wins over
 * `Accept`; without either the answer is Arrow. `Accept` follows RFC 9110 §12.5.1: media ranges
 * with q-values, `type/*` and `*\/*`; a format takes the q of the most specific range that matches
 * it; q=0 refuses it. Among formats of equal q, the one named more specifically wins, then the one
 * whose range comes first in the header, then the registry's order (Arrow first).
 *
 * Range parameters are compared only where the format has that parameter: `charset` must be UTF-8
 * for the text formats (every text format is UTF-8), `header` must be `present` for CSV; others are
 * ignored. A header naming nothing this server makes is a 406, never a silent Arrow stream.
 */
import { NotAcceptableError } from "../errors.ts";
import { DEFAULT_FORMAT, FORMATS, formatNamed, type OutputFormat } from "./registry.ts";

/** The parameters each format is served with, as `Accept` may ask for them. */
const SERVED_PARAMETERS: Record<OutputFormat["name"], Record<string, string>> = {
  arrow: {},
  parquet: {},
  csv: { charset: "utf-8", header: "present" },
  json: { charset: "utf-8" },
  ndjson: { charset: "utf-8" },
};

interface MediaRange {
  type: string;
  subtype: string;
  parameters: Map<string, string>;
  q: number;
}

/** The format to answer with, or the 406 to answer instead. */
export function negotiateFormat(accept: string | null | undefined, formatParameter?: string | null): OutputFormat | NotAcceptableError {
  if (formatParameter !== undefined && formatParameter !== null && formatParameter.trim() !== "") {
    return formatNamed(formatParameter.trim().toLowerCase()) ?? unknownFormat(formatParameter);
  }
  if (accept === undefined || accept === null || accept.trim() === "") return DEFAULT_FORMAT;
  const ranges = parseAccept(accept);
  let best: { format: OutputFormat; q: number; specificity: number; position: number } | null = null;
  for (const format of FORMATS) {
    const match = bestRange(format, ranges);
    if (match === null || match.range.q === 0) continue;
    const candidate = { format, q: match.range.q, specificity: match.specificity, position: match.position };
    if (best === null || better(candidate, best)) best = candidate;
  }
  return best?.format ?? notAcceptable(accept);
}

function better(a: { q: number; specificity: number; position: number }, b: typeof a): boolean {
  if (a.q !== b.q) return a.q > b.q;
  if (a.specificity !== b.specificity) return a.specificity > b.specificity;
  return a.position < b.position; // equal positions: the earlier format in FORMATS, already `b`
}

/** The most specific range matching the format (RFC 9110: it alone sets the format's q). */
function bestRange(format: OutputFormat, ranges: MediaRange[]): { range: MediaRange; specificity: number; position: number } | null {
  const type = format.mediaType.slice(0, format.mediaType.indexOf("/"));
  const names = [format.mediaType, ...format.alsoAccepted];
  const served = SERVED_PARAMETERS[format.name];
  let best: { range: MediaRange; specificity: number; position: number } | null = null;
  ranges.forEach((range, position) => {
    let level: number;
    if (range.type === "*" && range.subtype === "*") level = 0;
    else if (range.subtype === "*") level = range.type === type ? 1 : -1;
    else level = names.includes(`${range.type}/${range.subtype}`) ? 2 : -1;
    if (level < 0) return;
    let matched = 0;
    for (const [name, value] of range.parameters) {
      const wanted = served[name];
      if (wanted === undefined) continue;
      if (normalise(name, value) !== wanted) return;
      matched++;
    }
    const specificity = level * 100 + matched;
    if (best === null || specificity > best.specificity) best = { range, specificity, position };
  });
  return best;
}

function normalise(name: string, value: string): string {
  const lower = value.toLowerCase();
  return name === "charset" && lower === "utf8" ? "utf-8" : lower;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const QVALUE = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/** Media ranges of an `Accept` value; malformed ones are left out (they match nothing). */
export function parseAccept(accept: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of splitOutsideQuotes(accept, ",")) {
    const [mediaRange = "", ...parameterTexts] = splitOutsideQuotes(element, ";").map((part) => part.trim());
    const slash = mediaRange.indexOf("/");
    const type = mediaRange.slice(0, slash).toLowerCase();
    const subtype = mediaRange.slice(slash + 1).toLowerCase();
    if (slash < 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === "*" && subtype !== "*")) continue;
    const parameters = new Map<string, string>();
    let q = 1;
    let valid = true;
    for (const text of parameterTexts) {
      if (text === "") continue;
      const equals = text.indexOf("=");
      const name = text.slice(0, equals).trim().toLowerCase();
      let value = text.slice(equals + 1).trim();
      if (equals < 0 || !TOKEN.test(name)) {
        valid = false;
        break;
      }
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1).replace(/\\(.)/g, "$1");
      if (name === "q") {
        if (!QVALUE.test(value)) valid = false;
        else q = Number(value);
        break; // what follows the weight are accept extensions, not media type parameters
      }
      parameters.set(name, value);
    }
    if (valid) ranges.push({ type, subtype, parameters, q });
  }
  return ranges;
}

/** Splits on a separator that is not inside a quoted string. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === "\\") i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === separator) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const MEDIA_TYPES = FORMATS.map((format) => format.mediaType);
const NAMES = FORMATS.map((format) => format.name).join("|");

function notAcceptable(accept: string): NotAcceptableError {
  return new NotAcceptableError(
    `None of the types in Accept '${shown(accept)}' can be served: ask for ${listed(MEDIA_TYPES)}, or add ?format=${NAMES}`,
  );
}

function unknownFormat(name: string): NotAcceptableError {
  return new NotAcceptableError(`Unknown format '${shown(name)}': use ?format=${NAMES}, or an Accept header with ${listed(MEDIA_TYPES)}`);
}

function listed(items: string[]): string {
  return `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** Client text echoed in a message: printable and short. */
function shown(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > 80 ? `${printable.slice(0, 80)}…` : printable;
}
