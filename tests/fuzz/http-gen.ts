/**
 * Request lines and headers for the fuzzer: query strings encoded right and wrong, paths with dot
 * segments, encoded slashes and odd bytes, methods, `Accept` / `Accept-Encoding` with odd q-values
 * and parameters, `Origin`, `Host`, repeated headers, and lengths up to the request head limit.
 */
import type { FuzzRequest } from "./raw-http.ts";
import type { Random } from "./random.ts";

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encodes the UTF-8 of `text` (lone surrogates become U+FFFD), hex digits in either case. */
export function percentEncode(rng: Random, text: string, keep: RegExp = UNRESERVED): string {
  let out = "";
  for (const char of text) {
    if (keep.test(char)) {
      out += char;
      continue;
    }
    if (char === " " && rng.chance(0.3)) {
      out += "+";
      continue;
    }
    const upper = rng.chance(0.8);
    for (const byte of new TextEncoder().encode(char)) {
      const hex = byte.toString(16).padStart(2, "0");
      out += `%${upper ? hex.toUpperCase() : hex}`;
    }
  }
  return out;
}

/** The characters a careless client leaves raw in a query string: some harmless, some not (`+`, `&`, `#`, `%`). */
const CARELESS = /[A-Za-z0-9\-._~*'(),!$:;@/?=+&#%]/;

/** A `query=` value: correctly encoded mostly, otherwise with the mistakes clients make. */
export function encodeQueryValue(rng: Random, sql: string): string {
  const encoded = rng.chance(0.85) ? percentEncode(rng, sql) : percentEncode(rng, sql, CARELESS);
  if (!rng.chance(0.12)) return encoded;
  const at = rng.int(0, encoded.length);
  const mistake = rng.pick(["%", "%G1", "%zz", "%C3", "%C3%28", "%C0%AF", "%ED%A0%80", "%F4%90%80%80", "%FF", "%00", "%0A", "%%", "%2", "%u0041", "+", "&", "&query=", "#", "%23", "%26"]);
  return encoded.slice(0, at) + mistake + encoded.slice(at);
}

/** `/api/query?...` for this SQL, with other parameters now and then. */
export function queryTarget(rng: Random, sql: string): string {
  const params = [`query=${encodeQueryValue(rng, sql)}`];
  if (rng.chance(0.15)) params.push(`format=${rng.pick(formats)}`);
  if (rng.chance(0.05)) params.push(rng.pick(["query=", "query", "Query=SELECT%201", "query=SELECT%20*%20FROM%20kinds", "", "=", "&", "x=1", `pad=${"a".repeat(rng.int(1, 20000))}`, "format", "format=", "format=csv&format=json"]));
  rng.shuffle(params);
  return `${rng.chance(0.97) ? "/api/query" : rng.pick(["/api/query/", "/api//query", "/api/./query", "/api/x/../query", "/API/query", "/api/query%2F", "//api/query"])}?${params.join("&")}`;
}

const formats = ["arrow", "csv", "json", "ndjson", "parquet", "xlsx", "ARROW", "Csv", "", "json ", "arrow%00", "jsonl", "text/csv", "*", "%", "csv;q=1"];

const MEDIA_TYPES = [
  "application/vnd.apache.arrow.stream", "text/csv", "application/json", "application/x-ndjson", "application/jsonl",
  "application/vnd.apache.parquet", "application/x-parquet", "text/*", "*/*", "application/*", "text/html",
  "application/xhtml+xml", "image/webp", "*/json", "text", "", "application/vnd.apache.arrow.file", "x/y/z", ";", ",",
];
const MEDIA_PARAMS = [
  "q=0", "q=1", "q=0.5", "q=1.000", "q=0.001", "q=1.0001", "q=-1", "q=abc", "q=", "q=NaN", "q=1e-3", "Q=0.9", "q = 0.3",
  "charset=utf-8", "charset=UTF-8", "charset=latin1", "charset=\"utf-8\"", "header=present", "header=absent", "level=1",
  "q=0.5;q=1", "=", "x", "charset=", '"', "q=0.9;charset=utf-8",
];

export function acceptHeader(rng: Random): string {
  if (rng.chance(0.1)) return rng.pick(["text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8", "*/*", "", "  ", ",,,", "text/csv", "application/json"]);
  const entries = Array.from({ length: rng.int(1, rng.chance(0.05) ? 400 : 5) }, () => {
    const params = Array.from({ length: rng.size(3) }, () => rng.pick(MEDIA_PARAMS));
    return [rng.pick(MEDIA_TYPES), ...params].join(rng.pick([";", "; ", " ;"]));
  });
  return entries.join(rng.pick([",", ", ", " , "]));
}

export function acceptEncodingHeader(rng: Random): string {
  const codings = ["gzip", "zstd", "br", "deflate", "identity", "*", "x-gzip", "compress", "GZIP", "", "zstd;q=0", "gzip;q=0", "identity;q=0", "*;q=0", "gzip;q=0.5", "zstd;q=1.1", "gzip;q=abc", "br;q=1"];
  return Array.from({ length: rng.int(1, 5) }, () => rng.pick(codings)).join(rng.pick([",", ", "]));
}

export function originHeader(rng: Random): string {
  return rng.pick(["http://127.0.0.1", "null", "https://evil.example", "http://localhost:4021", "", "*", "file://", `https://${"a".repeat(rng.int(1, 5000))}.example`, "http://[::1]", "HTTP://EXAMPLE.COM", "x".repeat(rng.int(1, 100))]);
}

/**
 * Host values: valid ones (names, short names, IPs, ports) and invalid ones. RFC 9112 §3.2: an
 * invalid Host may be refused with 400, never answered with a server error.
 */
export function hostHeader(rng: Random, real: string): string {
  return rng.pick([real, "localhost", "a", "db", "web", "api", "abcd", "web:80", "example.com", "EXAMPLE.COM:443", "[::1]", "[::1]:8080", "10.0.0.1", "data.example", "x".repeat(255),
    "", "a b", "[", "a:b:c", "evil:99999", "@", "x/y", "%zz", "é", "a, b", "#", "?", "[::1", "u@h"]);
}

export function method(rng: Random): string {
  return rng.weighted<string>([
    [30, "GET"],
    [3, "HEAD"],
    [4, "POST"],
    [2, "OPTIONS"],
    [1, "PUT"],
    [1, "DELETE"],
    [1, "PATCH"],
    [0.5, "TRACE"],
    [0.3, "get"],
    [0.3, "FOO"],
    [0.2, "G ET"],
    [0.2, "PROPFIND"],
    [0.1, "GET".repeat(100)],
  ]);
}

/** A path: a known route, mutated. `slugs` are the dashboard folders of the server. */
export function path(rng: Random, slugs: string[], tables: string[]): string {
  const base = rng.pick([
    "/", "/api", "/api/", "/api/query", `/api/table/${rng.pick(tables)}`, `/api/table/${percentEncode(rng, rng.unicode(rng.size(20)))}`, "/mcp",
    "/healthz", "/readyz", "/metrics", "/index.html", "/favicon.ico", ...slugs.flatMap((slug) => [`/${slug}`, `/${slug}/`, `/${slug}/index.html`, `/${slug}/snapshot.arrow`, `/${slug}/dashboard.js`]),
  ]);
  let out = base;
  const rounds = rng.int(0, 3);
  for (let i = 0; i < rounds; i++) out = mutatePath(rng, out);
  return out;
}

function mutatePath(rng: Random, path: string): string {
  const segments = path.split("/");
  const at = rng.int(1, segments.length);
  const insert = (piece: string) => [...segments.slice(0, at), piece, ...segments.slice(at)].join("/");
  switch (rng.int(0, 9)) {
    case 0:
      return insert(rng.pick(["..", ".", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "..%2f..", "..%5c..", "%252e%252e", "..\\..", "....", "...", "%2e"]));
    case 1:
      return insert(rng.pick(["", "%2f", "%2F", "%5c", "\\", "%00", "%0a", ";", ";x=1", "?", "#", "%3F", "%23"]));
    case 2:
      return insert(rng.pick(["../../../../etc/passwd", "..%2f..%2f..%2fetc%2fpasswd", "%2e%2e/%2e%2e/secret.txt", "../secret.txt", "..%2fsecret.txt", "link.txt", ".hidden", ".git/config", "%2e%2e%5csecret.txt"]));
    case 3:
      return insert("a".repeat(rng.pick([100, 1000, 10_000, 30_000])));
    case 4:
      return insert(rng.chance(0.5) ? percentEncode(rng, rng.unicode(rng.size(30))) : rng.unicode(rng.size(10)));
    case 5:
      return insert(rng.pick(["%", "%G", "%zz", "%C3", "%C0%AF", "%FF%FE", "%ED%A0%80"]));
    case 6:
      return path.toUpperCase();
    case 7:
      return `${path}${rng.pick(["/", "//", "?", "?x=1", "?query=", `?query=${percentEncode(rng, "SELECT * FROM kinds")}`, "#frag", "%20", "/."])}`;
    case 8:
      return rng.pick([`http://127.0.0.1${path}`, `http://evil.example${path}`, `https://a:b@c${path}`, "*", `//x${path}`, path.replace(/^\//, "")]);
    default:
      return path.replaceAll("/", rng.pick(["//", "/./", "\\", "%2f"]));
  }
}

/** Extra header lines, some repeated, some long, some not valid HTTP. */
export function extraHeaders(rng: Random): [string, string][] {
  const headers: [string, string][] = [];
  const count = rng.size(6);
  for (let i = 0; i < count; i++) {
    headers.push(
      rng.pick<() => [string, string]>([
        () => ["Accept", acceptHeader(rng)],
        () => ["Accept-Encoding", acceptEncodingHeader(rng)],
        () => ["Origin", originHeader(rng)],
        () => ["X-Forwarded-For", rng.pick(["1.2.3.4", "1.2.3.4, 5.6.7.8", "unknown", "", "::1", "x".repeat(1000)])],
        () => ["Content-Type", rng.pick(["application/json", "text/plain", "application/x-www-form-urlencoded", "", "multipart/form-data; boundary=x"])],
        () => ["Range", rng.pick(["bytes=0-10", "bytes=-1", "bytes=99999999-", "bytes=abc", "items=0-1"])],
        () => ["If-None-Match", rng.pick(["*", '"x"', "W/\"y\""])],
        () => ["Cookie", `a=${"b".repeat(rng.int(0, 4000))}`],
        () => ["Authorization", rng.pick(["Bearer x", "Basic Og==", ""])],
        () => ["Access-Control-Request-Method", rng.pick(["GET", "POST", "DELETE", "X"])],
        () => ["Access-Control-Request-Headers", rng.pick(["payment-signature", "x-evil", "*", ""])],
        () => ["Mcp-Protocol-Version", rng.pick(["2025-06-18", "2025-03-26", "1999-01-01", "", "latest"])],
        () => ["Mcp-Session-Id", rng.pick(["abc", "", "x".repeat(300)])],
        () => ["Expect", rng.pick(["100-continue", "x"])],
        () => ["Transfer-Encoding", rng.pick(["chunked", "gzip", "identity", "chunked, chunked"])],
        () => [`X-Pad-${i}`, "p".repeat(rng.pick([10, 1000, 8000, 30_000, 60_000, 70_000]))],
        () => ["X-Unicode", rng.unicode(rng.size(20))],
        () => [rng.pick(["X Bad", "X:Colon", "", "X\u00e9", "X\tTab", "(x)"]), "v"],
        () => ["User-Agent", rng.unicode(rng.size(40))],
        () => ["PAYMENT-SIGNATURE", rng.pick(["", "e30=", "!!!", "bnVsbA==", "W10=", "x".repeat(rng.int(1, 3000))])],
      ])(),
    );
  }
  return headers;
}

/** A whole request: method, path and headers, with a body now and then. */
export function httpRequest(rng: Random, realHost: string, slugs: string[], tables: string[], queryOf: () => string): FuzzRequest {
  const verb = method(rng);
  const target = rng.chance(0.3) ? queryTarget(rng, queryOf()) : path(rng, slugs, tables);
  const headers = extraHeaders(rng);
  if (rng.chance(0.12)) headers.unshift(["Host", hostHeader(rng, realHost)]);
  if (rng.chance(0.05)) headers.push(["Host", hostHeader(rng, realHost)]);
  const body = verb !== "GET" && verb !== "HEAD" && rng.chance(0.5) ? rng.pick(["{}", "x", "", rng.unicode(rng.size(100)), '{"jsonrpc":"2.0","id":1,"method":"tools/list"}']) : undefined;
  return { method: verb, target, headers, ...(body === undefined ? {} : { body }), ...(rng.chance(0.01) ? { noHost: true } : {}) };
}
