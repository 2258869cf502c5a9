/**
 * Log lines (ARCHITECTURE.md §11 "Operations"): one per request and per payment, JSON for machines or
 * text for humans, built from events. Through a real server: every request gives exactly one line
 * with its route, status, duration, client, table, rows and bytes; a failing facilitator gives a
 * warning; and no line ever holds a secret of the config or the buyer's signature.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { resolveConfig } from "../../src/config/load.ts";
import type { OpsEvent } from "../../src/ops/events.ts";
import { createLogger } from "../../src/ops/logs.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { decodePaymentSignature } from "../../src/payment/wire.ts";
import { payingClient } from "../payment/client.ts";
import { paymentRequired } from "../support/paying.ts";
import { opsFixture, opsRawConfig, queryPath, removeFixture } from "./support.ts";

/** Captured lines: what went to stdout and to stderr. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, sink: { out: (line: string) => void out.push(line), err: (line: string) => void err.push(line) } };
}

const TIME = new Date("2026-03-01T12:00:00.000Z");
const request = (fields: Partial<Extract<OpsEvent, { type: "request.finished" }>> = {}): OpsEvent => ({
  type: "request.finished",
  time: TIME,
  method: "GET",
  route: "/api/query",
  path: "/api/query",
  status: 200,
  durationMs: 12.345,
  client: "203.0.113.7",
  table: "items",
  rows: 10,
  bytes: 1234,
  complete: true,
  ...fields,
});
const settled: OpsEvent = {
  type: "payment.settled",
  table: "items",
  network: "eip155:84532",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  amount: 12_000n,
  rows: 12,
  payer: "0x1111111111111111111111111111111111111111",
  transaction: `0x${"ab".repeat(32)}`,
  via: "settlement",
};

describe("json", () => {
  const lines = (events: OpsEvent[]) => {
    const { out, err, sink } = capture();
    const log = createLogger({ format: () => "json", sink, now: () => TIME });
    for (const event of events) log(event);
    expect(err).toEqual([]);
    return out.map((line) => JSON.parse(line));
  };

  test("a request: time, route, status, duration, client, table, rows and bytes", () => {
    expect(lines([request()])).toEqual([
      {
        time: "2026-03-01T12:00:00.000Z",
        level: "info",
        event: "request",
        method: "GET",
        route: "/api/query",
        path: "/api/query",
        status: 200,
        duration_ms: 12.3,
        client: "203.0.113.7",
        table: "items",
        rows: 10,
        bytes: 1234,
      },
    ]);
    expect(lines([request({ complete: false, rows: null })])[0]).toMatchObject({ complete: false, rows: null });
  });

  test("a payment: table, token, amount in smallest units, payer, transaction and how it was delivered", () => {
    expect(lines([settled])).toEqual([
      {
        time: "2026-03-01T12:00:00.000Z",
        level: "info",
        event: "payment",
        table: "items",
        network: "eip155:84532",
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        amount: "12000",
        rows: 12,
        payer: "0x1111111111111111111111111111111111111111",
        transaction: `0x${"ab".repeat(32)}`,
        via: "settlement",
      },
    ]);
  });

  test("a ledger alert is an error line naming the transaction", () => {
    const [line] = lines([{ type: "ledger.alert", paymentKey: "eip155:1|0xa|0xb|0xc", transaction: "0xfeed", message: "settled payment 0xfeed could not be recorded: disk full" }]);
    expect(line).toMatchObject({ level: "error", event: "ledger.alert", transaction: "0xfeed", message: expect.stringContaining("disk full") });
  });

  test("a claim lost while its request worked is a warning naming the table and the payment", () => {
    const [line] = lines([{ type: "payment.claim-lost", table: "items", paymentKey: "eip155:1|0xa|0xb|0xc" }]);
    expect(line).toEqual({ time: expect.any(String), level: "warn", event: "payment.claim_lost", table: "items", payment_key: "eip155:1|0xa|0xb|0xc" });
  });

  test("a refused reload lists every problem", () => {
    const [line] = lines([{ type: "config.rejected", source: "arrow402.yaml", problems: ["tables[0].name: a", "limits.max_rows: b"] }]);
    expect(line).toMatchObject({ level: "error", event: "config.rejected", problems: ["tables[0].name: a", "limits.max_rows: b"] });
  });

  test("an unpaid request's quote adds no line beside the request's own; a refused payment does", () => {
    expect(lines([{ type: "payment.refused", table: "items", reason: "required", detail: "Payment required" }])).toEqual([]);
    expect(lines([{ type: "payment.refused", table: "items", reason: "not-verified", detail: "x".repeat(1000) }])[0].detail.length).toBeLessThan(310);
  });
});

describe("text", () => {
  test("readable lines; warnings and errors on stderr, every problem on its own line", () => {
    const { out, err, sink } = capture();
    const log = createLogger({ format: () => "text", sink, now: () => TIME });
    log(request());
    log(settled);
    log({ type: "facilitator.error", endpoint: "settle", message: "The payment facilitator https://f.example/x did not answer /settle within 10 ms." });
    log({ type: "config.rejected", source: "a.yaml", problems: ["tables[0].name: one", "limits.max_rows: two"] });
    expect(out).toEqual([
      "2026-03-01T12:00:00.000Z info  GET /api/query 200 12.3ms route=/api/query client=203.0.113.7 table=items rows=10 bytes=1234",
      `2026-03-01T12:00:00.000Z info  payment table=items network=eip155:84532 asset=0x036CbD53842c5426634e7929541eC2318f3dCF7e amount=12000 rows=12 payer=0x1111111111111111111111111111111111111111 transaction=0x${"ab".repeat(32)} via=settlement`,
    ]);
    expect(err).toEqual([
      '2026-03-01T12:00:00.000Z warn  facilitator.error endpoint=settle message="The payment facilitator https://f.example/x did not answer /settle within 10 ms."',
      "2026-03-01T12:00:00.000Z error config reload from a.yaml refused (2 problems); still serving the previous config",
      "  tables[0].name: one",
      "  limits.max_rows: two",
    ]);
  });

  test("a value cannot start a line of its own", () => {
    const { out, sink } = capture();
    createLogger({ format: () => "text", sink })({ type: "payment.refused", table: "items", reason: "not-verified", detail: "bad\n2026-01-01T00:00:00Z info  forged" });
    expect(out).toHaveLength(1);
    expect(out[0]).toContain('detail="bad\\n2026');
  });
});

describe("through a real server", () => {
  const SECRETS = { USER: "log-s3cret-user", PASS: "log-s3cret-pass", TOKEN: "log-s3cret-token", HEADER: "log-s3cret-header", METRICS: "log-s3cret-metrics" };
  let server: RunningServer;
  let dir: string | undefined;
  const { out, err, sink } = capture();

  beforeAll(async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    dir = opsFixture();
    const raw = opsRawConfig({
      server: { bind: "127.0.0.1:0", log: "json", trust_proxy: "X-Forwarded-For", metrics: true, metrics_token: "${METRICS}" },
      facilitator: { url: `http://\${USER}:\${PASS}@127.0.0.1:${closedPort}/f?token=\${TOKEN}`, headers: { Authorization: "Bearer ${HEADER}" }, timeout_ms: 2000 },
    });
    server = await startServer(resolveConfig(raw, { baseDir: dir, env: SECRETS }), { workers: 1 });
    server.events.subscribe(createLogger({ format: () => server.config.server.log, sink }));
  });
  afterAll(async () => {
    await server?.stop();
    removeFixture(dir);
  });

  test("one line per request, a warning for the facilitator failure, and no secret or signature anywhere", async () => {
    const url = (path: string) => server.url + path;
    const headers = { "x-forwarded-for": "198.51.100.1, 203.0.113.9" };
    await (await fetch(url(queryPath("SELECT id, label FROM kinds")), { headers })).arrayBuffer();
    const quoteUrl = url(queryPath("SELECT id FROM items WHERE id <= 3"));
    const signature = await payingClient().sign(await paymentRequired(quoteUrl));
    const paid = await fetch(quoteUrl, { headers: { "PAYMENT-SIGNATURE": signature } });
    expect(paid.status).toBe(500);
    await paid.text();
    await (await fetch(url("/metrics"), { headers: { authorization: `Bearer ${SECRETS.METRICS}` } })).text();

    const lines = out.map((line) => JSON.parse(line));
    const requests = lines.filter((line) => line.event === "request");
    expect(requests.map((line) => `${line.route} ${line.status}`)).toEqual(["/api/query 200", "/api/query 402", "/api/query 500", "/metrics 200"]);
    expect(requests[0]).toMatchObject({ client: "203.0.113.9", table: "kinds", rows: 4, method: "GET", path: "/api/query" });
    expect(requests[0].bytes).toBeGreaterThan(0);
    expect(requests[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(requests[1]).toMatchObject({ client: "127.0.0.1" });
    const warning = lines.find((line) => line.event === "facilitator.error");
    expect(warning).toMatchObject({ level: "warn", endpoint: "verify" });
    expect(err).toEqual([]);

    const everything = [...out, ...err].join("\n");
    for (const secret of Object.values(SECRETS)) expect(everything).not.toContain(secret);
    const { signature: signed } = decodePaymentSignature(signature).payload;
    expect(everything).not.toContain(signed.slice(2, 40));
    expect(everything).not.toContain(signature.slice(0, 40));
  });
});
