/**
 * The `server:` section (ARCHITECTURE.md §2): where to listen, the public base URL used in offers
 * (`resource.url`), CORS origins, and the operations keys (operations.ts).
 * Like every resolver, returns undefined when a problem was recorded (here or by the schema).
 */
import type { Config } from "./types.ts";
import { DEFAULTS } from "./schema.ts";
import { isRecord, type ConfigPath, type Problems } from "./problems.ts";
import { publicUrl } from "./public-url.ts";
import { resolveOperations } from "./operations.ts";

/** `host:port`, IPv6 hosts in brackets (`[::1]:4021`). */
const BIND = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/;

/** RFC 9110 header field name (token characters). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Hosts that mean "every interface": not addresses a client can use, so the default base URL says localhost. */
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/** A section that may be absent: `{}` when absent, undefined when it has the wrong type (already reported). */
export function sectionOf(raw: unknown): Record<string, unknown> | undefined {
  if (raw === undefined) return {};
  return isRecord(raw) ? raw : undefined;
}

function parseBind(text: string, path: ConfigPath, problems: Problems): { host: string; port: number } | undefined {
  const match = BIND.exec(text);
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    problems.add(path, `${JSON.stringify(text)} is not host:port; write e.g. 127.0.0.1:4021, 0.0.0.0:8080 or [::1]:4021 (port 0 picks a free port)`);
    return undefined;
  }
  return { host: match[1] ?? match[2] ?? "", port };
}

export interface UrlRules {
  /** A query string is allowed (a facilitator token may travel in one); else it is a problem. */
  query?: boolean;
  /** `user:password@` is allowed (sent as HTTP Basic); else it is a problem. */
  credentials?: boolean;
}

/**
 * An http(s) URL without fragment (and, unless `rules` allow them, without query or credentials),
 * trailing slashes of the path removed. Messages show the URL without credentials or query
 * (`publicUrl`): the text may hold a secret.
 */
export function parseHttpUrl(text: string, path: ConfigPath, problems: Problems, example: string, rules: UrlRules = {}): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const shown = JSON.stringify(publicUrl(text));
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.hash !== "" || (!rules.query && url.search !== "")) {
    const without = rules.query ? "without fragment" : "without query or fragment";
    problems.add(path, `${shown} is not an http(s) URL ${without}; write e.g. ${example}`);
    return undefined;
  }
  if (!rules.credentials && (url.username !== "" || url.password !== "")) {
    problems.add(path, `${shown} must not hold user:password@: this URL is shown to clients; write e.g. ${example}`);
    return undefined;
  }
  const query = text.indexOf("?");
  return query < 0 ? text.replace(/\/+$/, "") : text.slice(0, query).replace(/\/+$/, "") + text.slice(query);
}

function checkOrigin(origin: string, path: ConfigPath, problems: Problems): boolean {
  if (origin === "*") return true;
  let parsed: string | undefined;
  try {
    parsed = new URL(origin).origin;
  } catch {
    parsed = undefined;
  }
  if (parsed === origin) return true;
  problems.add(path, `${JSON.stringify(origin)} is not an origin; write "*" or scheme://host[:port] with no path or trailing slash, e.g. https://example.com`);
  return false;
}

export function resolveServer(raw: unknown, problems: Problems): Config["server"] | undefined {
  const section = sectionOf(raw);
  if (section === undefined) return undefined;
  const { bind = DEFAULTS.bind, base_url: baseUrlText, cors_origins: origins = [...DEFAULTS.corsOrigins], trust_proxy: trustProxy } = section;
  const address = typeof bind === "string" ? parseBind(bind, ["server", "bind"], problems) : undefined;
  let baseUrl: string | undefined;
  if (typeof baseUrlText === "string") {
    baseUrl = parseHttpUrl(baseUrlText, ["server", "base_url"], problems, "https://data.example.com");
  } else if (baseUrlText === undefined && address !== undefined) {
    const host = WILDCARD_HOSTS.has(address.host) ? "localhost" : address.host.includes(":") ? `[${address.host}]` : address.host;
    baseUrl = `http://${host}:${address.port}`;
  }
  const originsOk =
    Array.isArray(origins) &&
    origins.map((origin, index) => typeof origin === "string" && checkOrigin(origin, ["server", "cors_origins", index], problems)).every(Boolean);
  const proxyOk = trustProxy === undefined || (typeof trustProxy === "string" && HEADER_NAME.test(trustProxy));
  if (!proxyOk && typeof trustProxy === "string") {
    problems.add(["server", "trust_proxy"], `${JSON.stringify(trustProxy)} is not an HTTP header name; write the header your proxy sets, e.g. X-Forwarded-For`);
  }
  const operations = resolveOperations(section, problems);
  if (address === undefined || baseUrl === undefined || !originsOk || !proxyOk || operations === undefined) return undefined;
  return {
    host: address.host,
    port: address.port,
    baseUrl,
    corsOrigins: origins as string[],
    trustProxy: typeof trustProxy === "string" ? trustProxy.toLowerCase() : null,
    ...operations,
  };
}
