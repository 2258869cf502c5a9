/**
 * The `server:` and `facilitator:` sections (DESIGN.md §2): where to listen, the public base URL
 * used in offers (`resource.url`), CORS origins, and how to reach the x402 facilitator.
 * Like every resolver, returns undefined when a problem was recorded (here or by the schema).
 */
import type { Config } from "./types.ts";
import { DEFAULTS } from "./schema.ts";
import { isRecord, type ConfigPath, type Problems } from "./problems.ts";

/** `host:port`, IPv6 hosts in brackets (`[::1]:4021`). */
const BIND = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/;

/** Hosts that mean "every interface": not addresses a client can use, so the default base URL says localhost. */
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

/** RFC 9110 header field name (token characters). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

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

/** An http(s) URL without query or fragment, trailing slashes removed. */
export function parseHttpUrl(text: string, path: ConfigPath, problems: Problems, example: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "") {
    problems.add(path, `${JSON.stringify(text)} is not an http(s) URL without query or fragment; write e.g. ${example}`);
    return undefined;
  }
  return text.replace(/\/+$/, "");
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
  if (address === undefined || baseUrl === undefined || !originsOk || !proxyOk) return undefined;
  return {
    host: address.host,
    port: address.port,
    baseUrl,
    corsOrigins: origins as string[],
    trustProxy: typeof trustProxy === "string" ? trustProxy.toLowerCase() : null,
  };
}

export function resolveFacilitator(raw: unknown, problems: Problems): Config["facilitator"] | undefined {
  const section = sectionOf(raw);
  if (section === undefined) return undefined;
  const { url: urlText = DEFAULTS.facilitatorUrl, timeout_ms: timeoutMs = DEFAULTS.facilitatorTimeoutMs, headers = {} } = section;
  const url = typeof urlText === "string" ? parseHttpUrl(urlText, ["facilitator", "url"], problems, DEFAULTS.facilitatorUrl) : undefined;
  let headersOk = isRecord(headers);
  for (const [name, value] of Object.entries(isRecord(headers) ? headers : {})) {
    const path = ["facilitator", "headers", name];
    if (!HEADER_NAME.test(name)) {
      problems.add(path, "is not a valid HTTP header name; use letters, digits and '-', e.g. Authorization");
      headersOk = false;
    }
    if (typeof value === "string" && /[\r\n\0]/.test(value)) {
      problems.add(path, "header values must be a single line");
      headersOk = false;
    }
    if (typeof value !== "string") headersOk = false;
  }
  if (url === undefined || !Number.isInteger(timeoutMs) || !headersOk) return undefined;
  return { url, timeoutMs: timeoutMs as number, headers: { ...(headers as Record<string, string>) } };
}
