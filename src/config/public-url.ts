/**
 * A configured URL as it may be shown — in the discovery document, in logs and in error messages:
 * scheme, host, port and path only. `user:password@` and the query string are the usual places to
 * put a token (`https://key:secret@facilitator.example`, `…/facilitator?apiKey=…`), and the
 * fragment has no business in a message either, so none of them is ever printed.
 */

/** `text` without credentials, query string or fragment; also for text that is not a valid URL. */
export function publicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not a URL: still drop anything that looks like `//user:pass@` and everything from `?` or `#`.
    return text.replace(/\/\/[^/?#]*@/, "//").replace(/[?#].*$/s, "");
  }
  const path = url.pathname.replace(/\/+$/, "");
  // Non-special schemes (postgres:) have the origin "null": rebuild it from its parts.
  const origin = url.origin === "null" ? `${url.protocol}//${url.host}` : url.origin;
  return `${origin}${path}`;
}
