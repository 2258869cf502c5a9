/**
 * What every answer to a fuzzed request must satisfy (DESIGN.md §4, §6, §8, §11; README "Errors"):
 * it arrives within a bound; its status is a documented one (a 500 only where the case made the
 * facilitator fail on purpose, a 431 only for a head over the limit, the HTTP layer's bare refusals
 * only for requests that are not valid HTTP/1.1); its body has the documented shape (one text line
 * without a stack trace, the x402 JSON mirrored in PAYMENT-REQUIRED (or, to a request asking for
 * HTML, the paywall page with that header), `{error}` for an unknown
 * table, JSON-RPC on /mcp); no data of a paid table leaves without a settlement receipt; no body
 * holds the secret kept beside the dashboards.
 */
import { headBytes, type Exchange, type FuzzRequest, type RawResponse } from "./raw-http.ts";
import { holdsNoRows, resultProblem } from "./result-format.ts";
import type { TableReads } from "./table-reads.ts";

/** Written next to the dashboards folder: no response may ever contain it (DESIGN.md §7). */
export const SECRET_MARKER = "FUZZ-SECRET-7f3a9c1e";

export interface ServerUnderTest {
  name: string;
  origin: URL;
  /** Longest request head the server accepts (bytes), as Bun counts it. */
  headLimit: number;
  /** No answer may take longer (ms): a hang. */
  boundMs: number;
}

export interface CaseFacts {
  request: FuzzRequest;
  server: ServerUnderTest;
  /** The case made the facilitator fail on purpose: a 500 is the documented answer (DESIGN.md §6 step 5). */
  outage?: boolean;
  /** The payment sent was altered so that it can never pay: no 200, no settlement. */
  mustRefuse?: string;
}

export interface Verdict {
  problems: string[];
  /** Settlement receipts of 200 answers (PAYMENT-RESPONSE), for the end-of-run money checks. */
  receipts: Receipt[];
}

export interface Receipt {
  transaction: string;
  payer: string;
  network: string;
  resource: string;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH", "CONNECT"]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Why the request is not valid HTTP/1.1 (RFC 9110, 9112), or null when it is: such a request may be
 * refused by the HTTP layer itself (a bare 400/505, or a closed connection), before arrow402 sees it.
 */
export function invalidHttp(request: FuzzRequest): string | null {
  if (!KNOWN_METHODS.has(request.method)) return `method ${JSON.stringify(request.method)}`;
  if (request.target === "" || /[\x00-\x20\x7f]/.test(request.target)) return "request-target with spaces or control characters";
  // RFC 9112 allows `OPTIONS *`; Bun's HTTP layer refuses every asterisk-form request with a bare 400.
  if (request.target === "*") return "asterisk-form target";
  if (!request.target.startsWith("/") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(request.target) && request.target !== "*") return "request-target form";
  const hosts = request.headers.filter(([name]) => name.toLowerCase() === "host");
  if (request.noHost ? hosts.length === 0 : hosts.length > 1) return "missing or repeated Host";
  for (const [name, value] of request.headers) {
    if (!TOKEN.test(name)) return `header name ${JSON.stringify(name)}`;
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) return `control characters in header ${name}`;
  }
  const codings = request.headers.filter(([name]) => name.toLowerCase() === "transfer-encoding");
  if (codings.length > 0 && (codings.length > 1 || codings[0]![1].trim().toLowerCase() !== "chunked")) return "transfer-encoding other than chunked";
  return null;
}

/** The status codes an arrow402 answer may have (README "Errors", "Agents (MCP)", CORS preflight). */
const DOCUMENTED = new Set([200, 202, 204, 400, 402, 404, 405, 406, 409, 413, 415, 429, 503]);

/** Signs of a stack trace or an internal error in a message meant for a client. */
const INTERNALS = /\n\s+at |\bat [\w.<>]+ \(|\.ts:\d+|\.js:\d+|TypeError|ReferenceError|RangeError|SyntaxError|undefined is not|Cannot read prop|\[object Object\]/;

export function checkExchange(facts: CaseFacts, exchange: Exchange, reads: TableReads): Verdict {
  const problems: string[] = [];
  const receipts: Receipt[] = [];
  const invalid = invalidHttp(facts.request);
  const overLimit = headBytes(facts.request, facts.server.origin.host) > facts.server.headLimit;

  if (exchange.kind === "hang") {
    return { problems: [`no complete response within ${facts.server.boundMs} ms (a hang); received so far: ${JSON.stringify(exchange.partial)}`], receipts };
  }
  if (exchange.kind === "abandoned") return { problems, receipts };
  if (exchange.kind === "closed") {
    if (invalid === null && !overLimit) problems.push(`the connection closed without a complete response (${exchange.error ?? "no error"}); received: ${JSON.stringify(exchange.partial)}`);
    return { problems, receipts };
  }
  const response = exchange.response;
  const text = new TextDecoder().decode(response.body);
  const type = response.headers["content-type"] ?? "";
  const path = pathOf(facts.request.target);

  if (text.includes(SECRET_MARKER)) problems.push("the body holds the file kept outside the dashboards folder");
  if (response.headers["x-fuzz-truncated"]) problems.push(`the body ended early (${response.headers["x-fuzz-truncated"]})`);

  // The HTTP layer's own refusals: no content type, no body.
  const bare = type === "" && response.body.length === 0 && response.status !== 204 && response.status !== 202;
  if (response.status === 431) {
    if (!overLimit) problems.push(`431 for a request head of ${headBytes(facts.request, facts.server.origin.host)} bytes, within the ${facts.server.headLimit}-byte limit`);
    return { problems, receipts };
  }
  if (bare && [400, 405, 413, 414, 501, 505].includes(response.status)) {
    if (invalid === null) problems.push(`the HTTP layer refused a valid request with a bare ${response.status}`);
    return { problems, receipts };
  }

  // Dashboard files are served as static files, which honour Range (RFC 9110 §14): 206 and 416 are
  // HTTP's own answers there, for requests that ask for a range.
  const ranged = (response.status === 206 || response.status === 416) && hasHeader(facts.request, "range") && !path.startsWith("/api") && !path.startsWith("/mcp");
  if (ranged) return { problems, receipts };
  const allowed = response.status === 500 ? facts.outage === true : DOCUMENTED.has(response.status);
  if (!allowed) {
    problems.push(`status ${response.status} is not a documented answer${response.status === 500 ? " (no facilitator failure was staged)" : ""}: ${text.slice(0, 300)}`);
  }
  if (response.status === 204 && facts.request.method !== "OPTIONS") problems.push("204 for a request that is not a CORS preflight");
  // The API's read-only paths answer POST, PUT, PATCH and DELETE with 405 and Allow: GET, HEAD.
  const readOnlyApi = /^\/api(\/|\/query\/?|\/table\/[^/]+\/?)?$/.test(path);
  if (response.status === 405 && readOnlyApi) {
    if (["GET", "HEAD", "OPTIONS"].includes(facts.request.method)) problems.push(`405 for ${facts.request.method} on ${path}`);
    if (response.headers["allow"] !== "GET, HEAD") problems.push(`405 on ${path} with Allow '${response.headers["allow"]}', not 'GET, HEAD'`);
  } else if ([202, 405, 413, 415].includes(response.status) && !path.startsWith("/mcp")) problems.push(`${response.status} outside /mcp`);

  if (facts.request.method === "HEAD") return { problems, receipts };

  if (response.status === 402 && type.startsWith("text/html")) checkPaywallPage(facts.request, response, text, problems);
  else if (response.status === 402) checkPaymentRequired(response, text, problems);
  else if (type.startsWith("text/plain") && response.status >= 400) checkTextError(response, text, problems);
  else if (response.status === 404) checkNotFound(type, text, problems);
  else if (response.status >= 400 && type.startsWith("application/json") && path.startsWith("/mcp")) checkJsonRpcError(text, problems);
  else if (response.status >= 400) problems.push(`a ${response.status} with content type '${type}': ${text.slice(0, 200)}`);

  if ((response.status === 429 || (response.status === 503 && !/dashboards/.test(text))) && response.headers["retry-after"] === undefined) {
    problems.push(`a ${response.status} without Retry-After`);
  }

  if (response.status === 200) checkDelivery(facts, response, text, reads, problems, receipts);
  if (response.status === 200 && facts.mustRefuse !== undefined && response.headers["payment-response"] !== undefined) {
    problems.push(`a payment altered so that it cannot pay (${facts.mustRefuse}) was accepted`);
  }
  return { problems, receipts };
}

function checkTextError(response: RawResponse, text: string, problems: string[]): void {
  if (text.trim() === "") problems.push(`an empty ${response.status} message`);
  if (/[\r\n]/.test(text.replace(/\n$/, ""))) problems.push(`a ${response.status} message of several lines: ${JSON.stringify(text.slice(0, 300))}`);
  if (INTERNALS.test(text)) problems.push(`a ${response.status} message showing internals: ${JSON.stringify(text.slice(0, 300))}`);
  if (response.status === 500 && text === "Internal server error") problems.push("an unexpected error (500 'Internal server error')");
}

function checkNotFound(type: string, text: string, problems: string[]): void {
  if (type.startsWith("application/json")) {
    const body = parseJson(text);
    if (typeof body?.error !== "string" || !/^Table '[\s\S]*' not found$/.test(body.error) || Object.keys(body).length !== 1) problems.push(`a 404 JSON body that is not {error: "Table '…' not found"}: ${text.slice(0, 200)}`);
  } else if (text !== "Not found") {
    problems.push(`a 404 body other than 'Not found': ${text.slice(0, 200)}`);
  }
}

function checkJsonRpcError(text: string, problems: string[]): void {
  const body = parseJson(text);
  if (body?.jsonrpc !== "2.0" || typeof body?.error?.code !== "number" || typeof body?.error?.message !== "string") {
    problems.push(`an MCP refusal that is not a JSON-RPC error: ${text.slice(0, 200)}`);
    return;
  }
  if (body.error.data !== undefined && INTERNALS.test(JSON.stringify(body.error.data))) problems.push(`a JSON-RPC error carrying an internal error: ${JSON.stringify(body.error).slice(0, 300)}`);
}

/**
 * The paywall page (ARCHITECTURE.md §15): the 402 as HTML only for a request that asked for HTML,
 * with the checkout, and PAYMENT-REQUIRED carrying a PaymentRequired as on every 402.
 */
function checkPaywallPage(request: FuzzRequest, response: RawResponse, text: string, problems: string[]): void {
  const accept = request.headers.filter(([name]) => name.toLowerCase() === "accept").map(([, value]) => value.toLowerCase());
  if (!accept.some((value) => value.includes("text/html"))) problems.push(`an HTML 402 for a request whose Accept does not name text/html: ${JSON.stringify(accept)}`);
  if (!text.includes('id="checkout-setup"')) problems.push(`an HTML 402 without the checkout: ${text.slice(0, 200)}`);
  const header = response.headers["payment-required"];
  if (header === undefined) {
    problems.push("an HTML 402 without PAYMENT-REQUIRED");
    return;
  }
  checkPaymentRequired(response, Buffer.from(header, "base64").toString("utf8"), problems);
}

function checkPaymentRequired(response: RawResponse, text: string, problems: string[]): void {
  const body = parseJson(text);
  // `accepts` may be empty: a payment in use by another request is refused before any count (DESIGN.md §6).
  if (body?.x402Version !== 2 || !Array.isArray(body.accepts) || typeof body.resource?.url !== "string" || typeof body.error !== "string") {
    problems.push(`a 402 body that is not an x402 V2 PaymentRequired: ${text.slice(0, 300)}`);
    return;
  }
  for (const offer of body.accepts) {
    if (offer.scheme !== "exact" || !/^eip155:\d+$/.test(offer.network) || !/^[1-9]\d*$/.test(offer.amount) || !/^0x[0-9a-fA-F]{40}$/.test(offer.asset) || !/^0x[0-9a-fA-F]{40}$/.test(offer.payTo)) {
      problems.push(`a 402 offer that cannot be paid: ${JSON.stringify(offer)}`);
    }
  }
  const header = response.headers["payment-required"];
  const mirrored = header === undefined ? null : parseJson(Buffer.from(header, "base64").toString("utf8"));
  if (JSON.stringify(mirrored) !== JSON.stringify(body)) problems.push("PAYMENT-REQUIRED does not carry the 402 body");
  if (INTERNALS.test(body.error)) problems.push(`a 402 error showing internals: ${body.error}`);
}

/** A 200: data of a paid table only with a settlement receipt; receipts collected for the money checks. */
function checkDelivery(facts: CaseFacts, response: RawResponse, text: string, reads: TableReads, problems: string[], receipts: Receipt[]): void {
  const receiptHeader = response.headers["payment-response"];
  const receipt = receiptHeader === undefined ? null : parseJson(Buffer.from(receiptHeader, "base64").toString("utf8"));
  if (receiptHeader !== undefined) {
    if (receipt?.success !== true || typeof receipt.transaction !== "string" || !/^0x[0-9a-f]{64}$/.test(receipt.transaction)) {
      problems.push(`a 200 with a PAYMENT-RESPONSE that is not a successful settlement: ${JSON.stringify(receipt)}`);
    } else {
      receipts.push({ transaction: receipt.transaction, payer: String(receipt.payer), network: String(receipt.network), resource: facts.request.target });
    }
  }
  const path = pathOf(facts.request.target);
  if (path === "/api/query") {
    const malformed = resultProblem(response);
    if (malformed !== null) problems.push(malformed);
    const sql = sqlOf(facts.request.target);
    if (sql === null) {
      problems.push("a 200 for a query request without exactly one query parameter");
      return;
    }
    const tables = reads.of(sql);
    // An empty result priced at 0 is served free (README "Zero"), except where the schema is sold ('items').
    const freeEmpty = malformed === null && holdsNoRows(response) && tables !== null && !tables.has("items");
    if (tables === null) problems.push("a 200 for SQL that SQLite itself cannot prepare");
    else if ([...tables].some((table) => table !== "kinds") && receipt?.success !== true && !freeEmpty) problems.push(`data of ${[...tables].join(", ")} delivered without a settlement`);
  }
  if (path.startsWith("/api/table/") && response.headers["content-type"]?.startsWith("application/json")) {
    const document = parseJson(text);
    if (document?.table_name === "items" && receipt?.success !== true) problems.push("the paid metadata of 'items' delivered without a settlement");
  }
}

function hasHeader(request: FuzzRequest, name: string): boolean {
  return request.headers.some(([header]) => header.toLowerCase() === name);
}

/** The path as the server routes it (dot segments resolved, as Bun does). */
export function pathOf(target: string): string {
  try {
    return new URL(target.replaceAll("\\", "/"), "http://fuzz.invalid").pathname;
  } catch {
    return target;
  }
}

/** The SQL the server reads from the request-target, or null when there is not exactly one `query`. */
export function sqlOf(target: string): string | null {
  try {
    const values = new URL(target, "http://fuzz.invalid").searchParams.getAll("query");
    return values.length === 1 ? values[0]! : null;
  } catch {
    return null;
  }
}

export function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
