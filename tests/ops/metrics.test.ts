/**
 * GET /metrics through a real listening server (ARCHITECTURE.md §11 "Operations"): the exposition is
 * read by a strict parser, and every series moves exactly as the requests made — by route label
 * and status, latency, rows and bytes (counted as the client received them, buffered or streamed),
 * and never a new label for a path a client invents. The bearer token is required when set.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type RunningServer } from "../../src/server.ts";
import { parseExposition, type Exposition } from "./exposition.ts";
import { BIG_ROWS, opsConfig, opsFixture, queryPath, removeFixture, scrape } from "./support.ts";

const TOKEN = "metrics-s3cret-token";
let dir: string;
let server: RunningServer;

beforeAll(async () => {
  dir = opsFixture();
  server = await startServer(opsConfig(dir, { server: { bind: "127.0.0.1:0", metrics: true, metrics_token: "${METRICS_TOKEN}" } }, { METRICS_TOKEN: TOKEN }), {
    workers: 2,
  });
});
afterAll(async () => {
  await server?.stop();
  removeFixture(dir);
});

/** Uncompressed (Bun's fetch asks for compression by default): the bytes received are the bytes sent. */
const get = (path: string, init?: RequestInit) => fetch(server.url + path, { ...init, headers: { "accept-encoding": "identity", ...init?.headers } });
const metrics = () => scrape(server.url, TOKEN);

/** Request counts by "route status" in `after` minus `before`, leaving out what did not move. */
function requestDiff(before: Exposition, after: Exposition): Record<string, number> {
  const diff: Record<string, number> = {};
  for (const sample of after.samples.filter((s) => s.name === "arrow402_http_requests_total")) {
    const moved = sample.value - (before.value(sample.name, sample.labels) ?? 0);
    if (moved !== 0) diff[`${sample.labels.route} ${sample.labels.status}`] = moved;
  }
  return diff;
}

describe("the bearer token", () => {
  test.each([
    ["no Authorization header", {}, 401],
    ["another scheme", { authorization: `Basic ${btoa(`x:${TOKEN}`)}` }, 401],
    ["a wrong token", { authorization: "Bearer not-the-token" }, 403],
    ["a prefix of the token", { authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 403],
    ["the token with a suffix", { authorization: `Bearer ${TOKEN}x` }, 403],
  ])("%s is refused", async (_name, headers, status) => {
    const response = await get("/metrics", { headers });
    expect(response.status).toBe(status);
    const text = await response.text();
    expect(text).not.toContain(TOKEN);
    if (status === 401) expect(response.headers.get("www-authenticate")).toStartWith("Bearer");
  });

  test("the token (from ${METRICS_TOKEN}) opens the Prometheus text format", async () => {
    const response = await get("/metrics", { headers: { authorization: `bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const parsed = parseExposition(await response.text());
    expect(parsed.types.get("arrow402_http_requests_total")).toBe("counter");
    expect(parsed.types.get("arrow402_http_request_duration_seconds")).toBe("histogram");
    expect(parsed.value("arrow402_ledger_alerts_total")).toBe(0);
  });
});

describe("series move exactly as requests are made", () => {
  test("requests by route label and status, and their latency", async () => {
    const before = await metrics();
    await (await get(queryPath("SELECT id FROM kinds"))).arrayBuffer();
    await (await get(queryPath("SELECT id, label FROM kinds WHERE id > 1"))).arrayBuffer();
    await (await get(queryPath("SELECT * FROM nowhere"))).text();
    await (await get(queryPath("SELECT id FROM items"))).text();
    await (await get("/api/")).text();
    await (await get("/api/table/kinds")).text();
    await (await get("/api/table/no_such_table")).text();
    await (await get("/healthz")).text();
    await (await get("/no/such/path")).text();
    const after = await metrics();
    expect(requestDiff(before, after)).toEqual({
      "/api/query 200": 2,
      "/api/query 400": 1,
      "/api/query 402": 1,
      "/api/ 200": 1,
      "/api/table/{name} 200": 1,
      "/api/table/{name} 404": 1,
      "/healthz 200": 1,
      "other 404": 1,
      // The scrape that took `before` is counted once its own response has been sent.
      "/metrics 200": 1,
    });
    const count = (e: Exposition) => e.value("arrow402_http_request_duration_seconds_count", { route: "/api/query" }) ?? 0;
    expect(count(after) - count(before)).toBe(4);
    expect(after.value("arrow402_http_request_duration_seconds_bucket", { route: "/api/query", le: "+Inf" })).toBe(count(after));
  });

  test("rows and bytes of a buffered result, as the client received them", async () => {
    const before = await metrics();
    const body = await (await get(queryPath("SELECT id, label FROM kinds"))).arrayBuffer();
    const after = await metrics();
    expect((after.value("arrow402_rows_served_total", { table: "kinds" }) ?? 0) - (before.value("arrow402_rows_served_total", { table: "kinds" }) ?? 0)).toBe(4);
    expect((after.value("arrow402_bytes_served_total", { table: "kinds" }) ?? 0) - (before.value("arrow402_bytes_served_total", { table: "kinds" }) ?? 0)).toBe(body.byteLength);
  });

  test("rows and bytes of a streamed export, counted when its body ends", async () => {
    const before = await metrics();
    const response = await get(queryPath("SELECT id, label FROM big"));
    expect(response.headers.get("content-length")).toBeNull();
    const body = await response.arrayBuffer();
    const after = await metrics();
    const moved = (name: string, labels: Record<string, string>) => (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    expect(moved("arrow402_rows_served_total", { table: "big" })).toBe(BIG_ROWS);
    expect(moved("arrow402_bytes_served_total", { table: "big" })).toBe(body.byteLength);
    expect(moved("arrow402_http_response_bytes_total", { route: "/api/query" })).toBe(body.byteLength);
  });

  test("a streamed export the client abandons counts as a request, with the bytes sent and no rows", async () => {
    const before = await metrics();
    const client = new AbortController();
    const response = await get(queryPath("SELECT id, label FROM big"), { signal: client.signal });
    const reader = response.body!.getReader();
    await reader.read();
    client.abort();
    let after = before;
    for (let poll = 0; poll < 100; poll++) {
      after = await metrics();
      if (requestDiff(before, after)["/api/query 200"] === 1) break;
      await Bun.sleep(20);
    }
    expect(requestDiff(before, after)["/api/query 200"]).toBe(1);
    expect(after.value("arrow402_rows_served_total", { table: "big" })).toBe(before.value("arrow402_rows_served_total", { table: "big" })!);
  });

  test("paths a client invents never become labels", async () => {
    const labelsBefore = new Set((await metrics()).samples.filter((s) => s.name === "arrow402_http_requests_total").map((s) => s.labels.route));
    const invented = Array.from({ length: 40 }, (_, i) => `/x${crypto.randomUUID()}/${i}`);
    invented.push("/api/table/%ZZ", `/api/table/${"a".repeat(5000)}`, "/api/query/extra", "/kinds/", "/.env", "/healthz/x");
    for (const path of invented) await (await get(path)).text();
    const after = await metrics();
    const routes = new Set(after.samples.filter((s) => s.name === "arrow402_http_requests_total").map((s) => s.labels.route));
    const added = [...routes].filter((route) => !labelsBefore.has(route));
    for (const route of added) expect(["other", "/api/table/{name}"]).toContain(route!);
    for (const sample of after.samples) for (const value of Object.values(sample.labels)) expect(value.length).toBeLessThan(100);
  });
});

describe("with server.metrics off (the default)", () => {
  test("/metrics is not served, /healthz is", async () => {
    const plain = await startServer(opsConfig(dir, { ledger: { path: "ledger-plain.sqlite" } }), { workers: 1 });
    try {
      expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
      const health = await fetch(`${plain.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });
    } finally {
      await plain.stop();
    }
  });
});
