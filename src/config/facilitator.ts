/**
 * The `facilitator:` section (ARCHITECTURE.md §2, §11): how to reach the x402 facilitator and how to
 * authenticate to it — static `headers`, `user:password@` or a token in the URL's query string,
 * or `cdp` (a Coinbase CDP API key: each request is signed with a fresh JWT, see
 * payment/cdp-auth.ts). Secrets are checked here, at start-up, and never quoted in a problem.
 */
import { parseCdpKeySecret, type CdpCredentials } from "./cdp-key.ts";
import { isRecord, type Problems } from "./problems.ts";
import { DEFAULTS } from "./schema.ts";
import { HEADER_NAME, parseHttpUrl, sectionOf } from "./server.ts";
import type { Config } from "./types.ts";

export function resolveFacilitator(raw: unknown, problems: Problems): Config["facilitator"] | undefined {
  const section = sectionOf(raw);
  if (section === undefined) return undefined;
  const { cdp: cdpSection, timeout_ms: timeoutMs = DEFAULTS.facilitatorTimeoutMs, headers = {} } = section;
  // With a CDP key and no URL, the URL is Coinbase's facilitator: the key is good for nothing else.
  const urlText = section.url ?? (cdpSection === undefined ? DEFAULTS.facilitatorUrl : DEFAULTS.cdpFacilitatorUrl);
  const url =
    typeof urlText === "string"
      ? parseHttpUrl(urlText, ["facilitator", "url"], problems, DEFAULTS.facilitatorUrl, { query: true, credentials: true })
      : undefined;
  const headersOk = checkHeaders(headers, problems);
  const cdp = cdpSection === undefined ? undefined : resolveCdp(cdpSection, problems);
  if (cdp !== undefined && isRecord(headers) && Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) {
    problems.add(["facilitator", "cdp"], "facilitator.headers also sets Authorization, which the CDP key signs for every request; remove one of them");
  }
  if (cdp !== undefined && typeof url === "string" && hasUserInfo(url)) {
    problems.add(["facilitator", "cdp"], "facilitator.url also holds user:password@, sent as Authorization, which the CDP key signs; remove one of them");
  }
  if (url === undefined || !Number.isInteger(timeoutMs) || !headersOk || cdp === null) return undefined;
  return {
    url,
    timeoutMs: timeoutMs as number,
    headers: { ...(headers as Record<string, string>) },
    ...(cdp === undefined ? {} : { cdp }),
  };
}

function checkHeaders(headers: unknown, problems: Problems): boolean {
  let ok = isRecord(headers);
  for (const [name, value] of Object.entries(isRecord(headers) ? headers : {})) {
    const path = ["facilitator", "headers", name];
    if (!HEADER_NAME.test(name)) {
      problems.add(path, "is not a valid HTTP header name; use letters, digits and '-', e.g. Authorization");
      ok = false;
    }
    if (typeof value === "string" && /[\r\n\0]/.test(value)) {
      problems.add(path, "header values must be a single line");
      ok = false;
    }
    if (typeof value !== "string") ok = false;
  }
  return ok;
}

/** The parsed key, or null when a problem was recorded (here or by the schema). */
function resolveCdp(raw: unknown, problems: Problems): CdpCredentials | null {
  if (!isRecord(raw)) return null;
  const { api_key_id: apiKeyId, api_key_secret: secret } = raw;
  if (typeof apiKeyId !== "string" || apiKeyId.trim() === "" || typeof secret !== "string" || secret.trim() === "") return null;
  if (/[\r\n\0]/.test(apiKeyId)) {
    problems.add(["facilitator", "cdp", "api_key_id"], "must be a single line, e.g. organizations/…/apiKeys/… or the key's id");
    return null;
  }
  const parsed = parseCdpKeySecret(secret);
  if (!parsed.ok) {
    problems.add(["facilitator", "cdp", "api_key_secret"], parsed.problem);
    return null;
  }
  return { apiKeyId: apiKeyId.trim(), algorithm: parsed.algorithm, privateKey: parsed.privateKey };
}

function hasUserInfo(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== "" || parsed.password !== "";
  } catch {
    return false;
  }
}
