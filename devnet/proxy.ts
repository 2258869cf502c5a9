/**
 * A misbehaving facilitator for failure tests: a real HTTP server in front of the devnet
 * facilitator that, per endpoint, forwards faithfully or fails in one of the ways a remote
 * facilitator can fail (ARCHITECTURE.md §6 step 5: unreachable, timed out, 5xx or malformed → 500;
 * `isValid:false` with 200 or 4xx → 402), or settles for real and then answers in the shape
 * another facilitator would (`rewrite`: a hash without `0x`, an empty network, x402-rs' status
 * codes…). It counts every request so tests can assert that the facilitator was, or was never,
 * called, and keeps the real facilitator's replies so tests know what really happened on chain.
 *
 * Built on node:http rather than Bun.serve because dropping a connection without an answer
 * (`drop`) needs the socket.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type FacilitatorEndpoint = "verify" | "settle" | "supported";

export type EndpointBehaviour =
  /** Pass the request to the real facilitator and its answer back (the default). */
  | { kind: "forward" }
  /** Close the connection without any answer (the client sees a network error). */
  | { kind: "drop" }
  /** Answer this status with a JSON error body. */
  | { kind: "status"; status: number }
  /** Answer 200 with a body that is not JSON. */
  | { kind: "malformed" }
  /** Answer 200 with valid JSON that is not a verify/settle response. */
  | { kind: "wrong-shape" }
  /** Answer nothing for `ms` milliseconds (default: until the proxy stops), then forward. */
  | { kind: "hang"; ms?: number }
  /** Refuse the payment with 400 `{isValid:false, invalidReason}`, as x402-rs does. */
  | { kind: "reject"; invalidReason: string; status?: number }
  /** Run `hook` with the parsed request body, then forward (e.g. drain the payer first). */
  | { kind: "hook"; before: (body: unknown) => Promise<void> }
  /** Answer this status and JSON body without forwarding (a facilitator that refuses before acting). */
  | { kind: "reply"; status: number; body: unknown }
  /**
   * Forward (the real facilitator acts: a settlement moves the money), then answer `rewrite` of
   * its JSON reply instead, with `status` (default: the real one).
   */
  | { kind: "rewrite"; rewrite: (reply: Record<string, any>) => unknown; status?: number };

export type ProxyBehaviour = Partial<Record<FacilitatorEndpoint, EndpointBehaviour>>;

export interface ProxiedRequest {
  endpoint: FacilitatorEndpoint | "other";
  body: unknown;
  method: string;
  /** Path and query string as received. */
  target: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
}

/** What the real facilitator answered to a forwarded request. */
export interface UpstreamReply {
  endpoint: FacilitatorEndpoint | "other";
  status: number;
  body: unknown;
}

export interface FacilitatorProxy {
  url: string;
  /** Requests received per endpoint (a dropped or hung request counts; a refused one cannot). */
  counts: Record<FacilitatorEndpoint | "other", number>;
  /** Every request received, in order, with its parsed JSON body (undefined if not JSON). */
  requests: ProxiedRequest[];
  /** The real facilitator's replies to forwarded requests, in order. */
  upstream: UpstreamReply[];
  setBehaviour(behaviour: ProxyBehaviour): void;
  resetCounts(): void;
  /** Stops listening but keeps `url`: from now on every connection to it is refused. */
  refuseConnections(): Promise<void>;
  stop(): Promise<void>;
}

const ENDPOINTS: Record<string, FacilitatorEndpoint> = {
  "/verify": "verify",
  "/settle": "settle",
  "/supported": "supported",
};

export async function startFacilitatorProxy(targetUrl: string, behaviour: ProxyBehaviour = {}): Promise<FacilitatorProxy> {
  let current = behaviour;
  const counts = { verify: 0, settle: 0, supported: 0, other: 0 };
  const requests: ProxiedRequest[] = [];
  const upstream: UpstreamReply[] = [];
  const target = targetUrl.replace(/\/+$/, "");
  // Hung requests wait on this; stopping releases them so no timer outlives the proxy.
  let release!: () => void;
  const stopped = new Promise<void>((resolve) => (release = resolve));

  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://proxy").pathname;
    const endpoint = ENDPOINTS[path] ?? "other";
    counts[endpoint] += 1;
    const raw = await readAll(req);
    const body = parseJson(raw);
    requests.push({ endpoint, body, method: req.method ?? "", target: req.url ?? "/", headers: headerRecord(req) });
    const rule = endpoint === "other" ? { kind: "forward" as const } : (current[endpoint] ?? { kind: "forward" as const });
    try {
      await respond(rule, { req, res, raw, body, path, target, stopped, record: (reply) => upstream.push({ endpoint, ...reply }) });
    } catch (error) {
      if (!res.headersSent) send(res, 502, JSON.stringify({ error: `proxy: ${String(error)}` }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    release();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    requests,
    upstream,
    setBehaviour: (next) => {
      current = next;
    },
    resetCounts: () => {
      counts.verify = counts.settle = counts.supported = counts.other = 0;
      requests.length = 0;
      upstream.length = 0;
    },
    refuseConnections: close,
    stop: close,
  };
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  raw: string;
  body: unknown;
  path: string;
  target: string;
  stopped: Promise<void>;
  record: (reply: { status: number; body: unknown }) => void;
}

async function respond(rule: EndpointBehaviour, x: Exchange): Promise<void> {
  switch (rule.kind) {
    case "forward":
      return forward(x);
    case "drop":
      x.req.socket.destroy();
      return;
    case "status":
      return send(x.res, rule.status, JSON.stringify({ error: `facilitator failure (${rule.status})` }));
    case "malformed":
      return send(x.res, 200, '{"isValid": tru', "application/json");
    case "wrong-shape":
      return send(x.res, 200, JSON.stringify({ ok: true, result: ["not", "a", "facilitator", "answer"] }));
    case "hang": {
      const waited = rule.ms === undefined ? x.stopped : Promise.race([Bun.sleep(rule.ms), x.stopped]);
      await waited;
      if (x.req.socket.destroyed) return;
      return forward(x);
    }
    case "reject":
      return send(x.res, rule.status ?? 400, JSON.stringify({ isValid: false, invalidReason: rule.invalidReason }));
    case "hook":
      await rule.before(x.body);
      return forward(x);
    case "reply":
      return send(x.res, rule.status, JSON.stringify(rule.body));
    case "rewrite": {
      const real = await ask(x);
      const reply = parseJson(real.text);
      if (typeof reply !== "object" || reply === null) throw new Error(`cannot rewrite a reply that is not a JSON object: ${real.text}`);
      return send(x.res, rule.status ?? real.status, JSON.stringify(rule.rewrite(reply as Record<string, any>)));
    }
  }
}

/** Sends the request on to the real facilitator and records its reply. */
async function ask(x: Exchange): Promise<{ status: number; text: string; contentType: string }> {
  const upstream = await fetch(`${x.target}${x.path}`, {
    method: x.req.method,
    headers: { "content-type": x.req.headers["content-type"] ?? "application/json" },
    body: x.req.method === "GET" || x.req.method === "HEAD" ? undefined : x.raw,
  });
  const text = await upstream.text();
  x.record({ status: upstream.status, body: parseJson(text) });
  return { status: upstream.status, text, contentType: upstream.headers.get("content-type") ?? "application/json" };
}

async function forward(x: Exchange): Promise<void> {
  const real = await ask(x);
  send(x.res, real.status, real.text, real.contentType);
}

function headerRecord(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function send(res: ServerResponse, status: number, body: string, contentType = "application/json"): void {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(raw: string): unknown {
  try {
    return raw === "" ? undefined : JSON.parse(raw);
  } catch {
    return undefined;
  }
}
