/**
 * The URL a payment is bound to (x402 `resource.url`; ARCHITECTURE.md §6, §12). One SQL is one
 * resource (DESIGN.md §17): a query's URL is built from its decoded SQL, encoded one way, with no
 * other parameter (`format` changes how the answer is written, not what is sold). So every correct
 * encoding of the same SQL — `%20` or `+`, `%2A` or `*`, a browser's, Python's `quote` or
 * `requests`' — is quoted, paid and served again as the same resource, over HTTP and MCP alike.
 */
import { BadRequestError } from "../errors.ts";

/**
 * The query's URL as an HTTP client built on encodeURIComponent sends it (then the WHATWG URL
 * normalisation every fetch applies, e.g. `'` → `%27`): the canonical resource of `sql`.
 */
export function httpQueryUrl(baseUrl: string, sql: string): string {
  const { pathname, search } = new URL(`http://server/api/query?query=${encodeURIComponent(wellFormed(sql, "query"))}`);
  return baseUrl + pathname + search;
}

/** The table endpoint's URL for `name`, as an HTTP client sends it. */
export function httpTableUrl(baseUrl: string, name: string): string {
  return baseUrl + new URL(`http://server/api/table/${encodeURIComponent(wellFormed(name, "table name"))}`).pathname;
}

/**
 * JSON (MCP) can carry a lone UTF-16 surrogate, which no URL, HTTP request or UTF-8 text can: such
 * text names no resource, and is refused rather than changed.
 */
function wellFormed(text: string, what: string): string {
  if (text.isWellFormed()) return text;
  const lone = [...text].find((c) => c.length === 1 && c.charCodeAt(0) >= 0xd800 && c.charCodeAt(0) <= 0xdfff)!;
  throw new BadRequestError(`The ${what} holds a lone UTF-16 surrogate (\\u${lone.charCodeAt(0).toString(16)}), which is not text: send valid Unicode`);
}
