/**
 * A raw HTTP/1.1 client over a TCP socket. `fetch` cleans what it sends (dot segments, percent
 * signs, header names and values, one value per name), and a hostile client does not: the fuzzer
 * writes the exact request line, header lines and body it generated, one request per connection,
 * and reads whatever comes back, so a request can be replayed byte for byte from its printout.
 */
import { connect } from "node:net";

export interface FuzzRequest {
  method: string;
  /** The request-target exactly as sent (the path and query string, or anything else). */
  target: string;
  /** Header lines in order, sent as they are (names and values may repeat or be malformed). */
  headers: [string, string][];
  body?: string;
  /** Leave out the Host header the client adds otherwise. */
  noHost?: boolean;
}

export interface RawResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Uint8Array;
  elapsedMs: number;
}

export type Exchange =
  | { kind: "response"; response: RawResponse }
  /** No complete response within the bound. */
  | { kind: "hang"; elapsedMs: number; partial: string }
  /** The connection closed (or failed) before a complete response. */
  | { kind: "closed"; elapsedMs: number; partial: string; error?: string }
  /** The client itself closed the connection after `abandonAfterMs`, before a complete response. */
  | { kind: "abandoned"; elapsedMs: number };

/** The bytes of the request head and body as written to the socket. */
export function serialize(request: FuzzRequest, host: string): Buffer {
  const lines = [`${request.method} ${request.target} HTTP/1.1`];
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  if (!request.noHost && !names.has("host")) lines.push(`Host: ${host}`);
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  if (!names.has("connection")) lines.push("Connection: close");
  let body = request.body === undefined ? undefined : Buffer.from(request.body, "utf8");
  if (names.has("transfer-encoding")) {
    // Framed as chunks, so that the server is never left waiting for a body that does not come.
    const data = body ?? Buffer.alloc(0);
    body = Buffer.concat([data.length > 0 ? Buffer.from(`${data.length.toString(16)}\r\n`) : Buffer.alloc(0), data, Buffer.from(data.length > 0 ? "\r\n0\r\n\r\n" : "0\r\n\r\n")]);
  } else if (body !== undefined && !names.has("content-length")) {
    lines.push(`Content-Length: ${body.length}`);
  }
  const head = Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "utf8");
  return body === undefined ? head : Buffer.concat([head, body]);
}

/** Bytes of the request head (request line, header lines, the blank line), as the server counts them. */
export function headBytes(request: FuzzRequest, host: string): number {
  const bytes = serialize(request, host);
  return bytes.indexOf("\r\n\r\n") + 4;
}

/**
 * Sends one request on a fresh connection and reads one response, within `timeoutMs`; with
 * `abandonAfterMs`, closes the connection that long after sending, as a client that gives up.
 */
export function exchange(origin: URL, request: FuzzRequest, timeoutMs: number, abandonAfterMs?: number): Promise<Exchange> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = connect({ host: origin.hostname, port: Number(origin.port) });
    const finish = (result: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const partial = () => Buffer.concat(chunks).toString("latin1").slice(0, 500);
    const timer = setTimeout(() => finish({ kind: "hang", elapsedMs: elapsed(), partial: partial() }), timeoutMs);
    socket.on("connect", () => {
      socket.write(serialize(request, origin.host));
      if (abandonAfterMs !== undefined) setTimeout(() => finish({ kind: "abandoned", elapsedMs: elapsed() }), abandonAfterMs);
    });
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      const parsed = parseResponse(Buffer.concat(chunks), request.method);
      if (parsed !== null) finish({ kind: "response", response: { ...parsed, elapsedMs: elapsed() } });
    });
    socket.on("error", (error) => finish({ kind: "closed", elapsedMs: elapsed(), partial: partial(), error: String(error) }));
    socket.on("close", () => {
      const parsed = parseResponse(Buffer.concat(chunks), request.method, true);
      if (parsed !== null) finish({ kind: "response", response: { ...parsed, elapsedMs: elapsed() } });
      else finish({ kind: "closed", elapsedMs: elapsed(), partial: partial() });
    });
  });
}

/** The response once complete (by Content-Length, chunked framing, or the end of the connection); else null. */
function parseResponse(data: Buffer, method: string, ended = false): Omit<RawResponse, "elapsedMs"> | null {
  // Interim answers (100 Continue) come before the response.
  while (/^HTTP\/1\.[01] 1\d\d/.test(data.subarray(0, 12).toString("latin1")) && data.indexOf("\r\n\r\n") >= 0) data = data.subarray(data.indexOf("\r\n\r\n") + 4);
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString("latin1").split("\r\n");
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
  if (!match) return ended ? { status: 0, headers: { "x-fuzz-unparsable": lines[0]! }, body: new Uint8Array() } : null;
  const status = Number(match[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const rest = data.subarray(end + 4);
  if (method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200)) return { status, headers, body: new Uint8Array() };
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
    const body = dechunk(rest);
    return body === null ? (ended ? { status, headers: { ...headers, "x-fuzz-truncated": "chunked body ended early" }, body: rest } : null) : { status, headers, body };
  }
  if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (rest.length >= length) return { status, headers, body: new Uint8Array(rest.subarray(0, length)) };
    return ended ? { status, headers: { ...headers, "x-fuzz-truncated": `${rest.length} of ${length} bytes` }, body: rest } : null;
  }
  return ended ? { status, headers, body: new Uint8Array(rest) } : null;
}

/** The body of a complete chunked transfer, or null while it is incomplete. */
function dechunk(data: Buffer): Uint8Array | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) return null;
    const size = parseInt(data.subarray(at, lineEnd).toString("latin1").split(";")[0]!, 16);
    if (Number.isNaN(size)) return null;
    const start = lineEnd + 2;
    if (size === 0) return data.indexOf("\r\n", start) < 0 ? null : new Uint8Array(Buffer.concat(parts));
    if (data.length < start + size + 2) return null;
    parts.push(data.subarray(start, start + size));
    at = start + size + 2;
  }
}

/**
 * A JavaScript expression for `text`, exact and short: runs of one character longer than 24 are
 * written as `.repeat()`, everything else JSON-escaped (so control characters and lone surrogates
 * survive a copy from the test output).
 */
export function literal(text: string): string {
  const parts: string[] = [];
  let plain = "";
  let i = 0;
  const chars = [...text];
  while (i < chars.length) {
    let run = 1;
    while (i + run < chars.length && chars[i + run] === chars[i]) run++;
    if (run > 24) {
      if (plain !== "") parts.push(JSON.stringify(plain));
      plain = "";
      parts.push(`${JSON.stringify(chars[i])}.repeat(${run})`);
    } else {
      plain += chars.slice(i, i + run).join("");
    }
    i += run;
  }
  if (plain !== "" || parts.length === 0) parts.push(JSON.stringify(plain));
  return parts.join(" + ");
}

/** The request as a replayable description: method, target, headers and body as JS literals. */
export function describeRequest(request: FuzzRequest): string {
  const headers = request.headers.map(([name, value]) => `[${literal(name)}, ${literal(value)}]`).join(", ");
  return [
    `method: ${literal(request.method)}`,
    `target: ${literal(request.target)}`,
    `headers: [${headers}]${request.noHost ? " (no Host header)" : ""}`,
    ...(request.body === undefined ? [] : [`body: ${literal(request.body)}`]),
  ].join("\n  ");
}
