/**
 * `limits.max_concurrent_per_client` and `server.trust_proxy` (ARCHITECTURE.md §11 "Hostile clients")
 * through a real listening server: a client's queries beyond the limit get 429 with Retry-After
 * while other clients are served; a streamed response counts until its body has been sent; behind
 * a proxy the client is the last address the proxy appended; a response cut by the send timeout,
 * compressed or not, gives its place back at once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { buildApp, startServer, type RunningServer } from "../../src/server.ts";
import { typesConfig, typesDatabaseWithBigTable } from "../support/fixtures.ts";
import { slowQuery } from "../support/slow-query.ts";

let direct: RunningServer;
let proxied: RunningServer;
let pair: RunningServer;
let dir: string;
const tables = [{ name: "big" }, { name: "kinds" }];
/**
 * The slow queries below take seconds on an idle machine and can take a minute on two loaded
 * cores; each must run to its end (200), so the time limit, which is not what is tested here, is
 * one they do not reach there, and so are the tests' own.
 */
const SLOW_MACHINE_MS = 120_000;
const limits = { max_concurrent_per_client: 1, query_timeout_ms: SLOW_MACHINE_MS, receive_timeout_ms: 1_000 };

beforeAll(async () => {
  const fixture = typesDatabaseWithBigTable(200_000);
  fixture.db.close();
  dir = fixture.dir;
  direct = await startServer(typesConfig(dir, { tables, limits }), { workers: 2 });
  proxied = await startServer(typesConfig(dir, { tables, limits, ledger: { path: "ledger2.sqlite" }, server: { bind: "127.0.0.1:0", trust_proxy: "X-Forwarded-For" } }), {
    workers: 2,
  });
  pair = await startServer(typesConfig(dir, { tables, limits: { ...limits, max_concurrent_per_client: 2 }, ledger: { path: "ledger3.sqlite" } }), { workers: 2 });
});
afterAll(async () => {
  await direct.stop();
  await proxied.stop();
  await pair.stop();
});

const query = (server: RunningServer, sql: string, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/api/query?query=${encodeURIComponent(sql)}`, { headers });

describe("max_concurrent_per_client", () => {
  test("a second query while the first runs is 429 with Retry-After; once the first is done, the next runs", async () => {
    const running = query(direct, slowQuery(1));
    await Bun.sleep(300);
    const refused = await query(direct, "SELECT * FROM kinds");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.headers.get("content-type")).toStartWith("text/plain");
    expect(await refused.text()).toContain("wait for one to finish");
    expect((await running).status).toBe(200);
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(200);
  }, SLOW_MACHINE_MS + 30_000);

  test("a streamed response counts until its body has been read", async () => {
    const streaming = await query(direct, "SELECT * FROM big");
    expect(streaming.status).toBe(200);
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(429);
    await streaming.arrayBuffer();
    await Bun.sleep(50);
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(200);
  });
});

/** `count` MCP query calls in one JSON-RPC batch POST. */
function mcpBatch(server: RunningServer, count: number) {
  const calls = Array.from({ length: count }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "query", arguments: { sql: "SELECT id FROM kinds" } } }));
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" },
    body: JSON.stringify(count === 1 ? calls[0] : calls),
  });
}

describe("max_concurrent_per_client and MCP batches: each tool call is one query", () => {
  test("a batch of more calls than the limit is refused (400, JSON-RPC) before any runs", async () => {
    const refused = await mcpBatch(direct, 2);
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toBe(
      "Invalid Request: this batch carries 2 tool calls, more than 1 (limits.max_concurrent_per_client): send at most 1 per POST.",
    );
    expect((await mcpBatch(direct, 1)).status).toBe(200);
  });

  test("a POST to /mcp holds a query's slot while its body is still arriving", async () => {
    const abort = new AbortController();
    const stalled = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode('{"jsonrpc":"2.0","id":1,"method":"tools/call",')),
    });
    const pending = fetch(`${direct.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: stalled,
      signal: abort.signal,
      duplex: "half",
    } as RequestInit).catch(() => null);
    await Bun.sleep(200);
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(429);
    abort.abort();
    await pending;
    await Bun.sleep(100);
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(200);
  });

  test("a body still arriving after receive_timeout_ms is refused (408, JSON-RPC), the connection closed and the slot freed", async () => {
    const { hostname, port } = new URL(direct.url);
    const socket = connect(Number(port), hostname);
    let answer = "";
    socket.on("data", (bytes) => (answer += String(bytes)));
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    const head = `POST /mcp HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n`;
    socket.write(head + '{"jsonrpc":"2.0","id":1,');
    // A byte every 100 ms: the client is never idle, the body never complete.
    const trickle = setInterval(() => socket.write(" "), 100);
    try {
      await Bun.sleep(300);
      expect((await query(direct, "SELECT * FROM kinds")).status).toBe(429);
      await closed;
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
    expect(answer).toStartWith("HTTP/1.1 408 ");
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
    expect(body).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: "Request Timeout: the request body did not arrive within 1 s (limits.receive_timeout_ms): send the whole JSON-RPC message at once." },
    });
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(200);
  });

  test("a batch within the limit waits for room for all its calls: 429 while another query runs", async () => {
    const running = query(pair, slowQuery(3));
    await Bun.sleep(300);
    const refused = await mcpBatch(pair, 2);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.text()).toBe(
      "This client already has 1 query running and this request carries 2, 2 being the most one client may run at once: wait for one to finish, then retry",
    );
    // One call still fits beside the running query.
    expect((await mcpBatch(pair, 1)).status).toBe(200);
    expect((await running).status).toBe(200);
    const answered = await mcpBatch(pair, 2);
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as unknown[]).length).toBe(2);
  }, SLOW_MACHINE_MS + 30_000);
});

describe("trust_proxy", () => {
  test("clients are told apart by the last address the proxy appended, not by the proxy's own", async () => {
    const running = query(proxied, slowQuery(2), { "x-forwarded-for": "198.51.100.7" });
    await Bun.sleep(300);
    // Another client behind the same proxy is served; the first client (even with a forged first hop) is not.
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "203.0.113.9" })).status).toBe(200);
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "10.0.0.1, 198.51.100.7" })).status).toBe(429);
    // The same IPv4 client as a dual-stack proxy writes it.
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "::ffff:198.51.100.7" })).status).toBe(429);
    expect((await running).status).toBe(200);
  }, SLOW_MACHINE_MS + 30_000);

  test("an IPv6 client is its /64 (limits.client_ipv6_prefix): another address of that network is the same client", async () => {
    const running = query(proxied, slowQuery(3), { "x-forwarded-for": "2001:db8:0:1::7" });
    await Bun.sleep(300);
    const sameNetwork = await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "2001:db8:0:1:8f3a:11:2:9" });
    expect(sameNetwork.status).toBe(429);
    expect(await sameNetwork.text()).toContain("This client already has 1 query running");
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "2001:db8:0:2::7" })).status).toBe(200);
    expect((await running).status).toBe(200);
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "2001:db8:0:1:8f3a:11:2:9" })).status).toBe(200);
  }, SLOW_MACHINE_MS + 30_000);
  test("IPv4 clients behind a translator with the well-known prefix 64:ff9b::/96 are their IPv4 addresses, not one /64", async () => {
    const running = query(proxied, slowQuery(3), { "x-forwarded-for": "64:ff9b::198.51.100.7" });
    await Bun.sleep(300);
    // Another IPv4 client through the same translator (same /64) is served.
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "64:ff9b::203.0.113.9" })).status).toBe(200);
    // The same IPv4 client, through the translator or not, is not.
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "64:ff9b::c633:6407" })).status).toBe(429);
    expect((await query(proxied, "SELECT * FROM kinds", { "x-forwarded-for": "198.51.100.7" })).status).toBe(429);
    expect((await running).status).toBe(200);
  }, SLOW_MACHINE_MS + 30_000);
});

describe("a reload changes the limits, not what clients hold", () => {
  test("a query running across a SIGHUP reload still counts against its client", async () => {
    const running = query(direct, slowQuery(4));
    await Bun.sleep(300);
    const outcome = await direct.reload(() => typesConfig(dir, { tables, limits: { ...limits, receive_timeout_ms: 2_000 } }), "test");
    expect(outcome).toMatchObject({ applied: true, changed: ["limits.receive_timeout_ms"] });
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(429);
    expect((await running).status).toBe(200);
    expect((await query(direct, "SELECT * FROM kinds")).status).toBe(200);
  }, SLOW_MACHINE_MS + 30_000);
});

describe("a response cut by send_timeout_ms gives its client's place back at once", () => {
  // Through the app alone: no connection is closed after the cut, so only the cut can free the place.
  test.each(["identity", "gzip", "zstd"])("Accept-Encoding: %s", async (coding) => {
    const config = typesConfig(dir, { tables, limits: { ...limits, send_timeout_ms: 300 }, ledger: { path: `ledger-cut-${coding}.sqlite` } });
    const built = await buildApp(config, { workers: 2, peerAddress: () => "192.0.2.7" });
    try {
      const ask = (sql: string) => built.app.handle(new Request(`http://arrow402.test/api/query?query=${encodeURIComponent(sql)}`, { headers: { "accept-encoding": coding } }));
      const stalled = await ask("SELECT * FROM big");
      expect(stalled.status).toBe(200);
      expect(stalled.headers.get("content-encoding")).toBe(coding === "identity" ? null : coding);
      expect((await ask("SELECT * FROM kinds")).status).toBe(429);
      // Never read: cut 300 ms after the last pull; polled for at most 5 s.
      let next = 429;
      for (let poll = 0; poll < 50 && next === 429; poll++) {
        await Bun.sleep(100);
        next = (await ask("SELECT * FROM kinds")).status;
      }
      expect(next).toBe(200);
    } finally {
      await built.close();
    }
  }, SLOW_MACHINE_MS + 30_000);
});
