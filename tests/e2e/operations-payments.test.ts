/**
 * Payments and readiness seen by operations, on the devnet (ARCHITECTURE.md §11 "Operations"): metrics
 * and log lines built from the payment core's events — a settlement, a replay (no new revenue), a
 * refused payment, a failing facilitator, and a settled payment the ledger cannot record (a loud
 * error line and an alert metric) — and /readyz asking the real facilitator's /supported, once
 * per few seconds however often it is polled.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createLogger } from "../../src/ops/logs.ts";
import { SANDBOX_START_TIMEOUT_MS, startPaidSandbox, type PaidSandbox, type PaidServer } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl } from "../support/paying.ts";
import { PAY_TO } from "../support/fixtures.ts";
import { scrape } from "../ops/support.ts";
import type { Exposition } from "../ops/exposition.ts";

const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 20 AND 29 LIMIT 100";
const FLAT_UNITS = 50_000;

let sandbox: PaidSandbox;
beforeAll(async () => {
  sandbox = await startPaidSandbox();
}, SANDBOX_START_TIMEOUT_MS);
afterAll(() => sandbox?.stop());

/** A server of the sandbox with metrics on and its JSON log lines captured. */
async function observed(): Promise<{ server: PaidServer; lines: () => Record<string, any>[]; raw: string[] }> {
  const server = await sandbox.serve({ server: { metrics: true, log: "json" } });
  const raw: string[] = [];
  server.events.subscribe(createLogger({ format: () => "json", sink: { out: (line) => void raw.push(line), err: (line) => void raw.push(line) } }));
  return { server, raw, lines: () => raw.map((line) => JSON.parse(line)) };
}

describe("payments", () => {
  let server: PaidServer;
  let lines: () => Record<string, any>[];
  let raw: string[];
  beforeAll(async () => {
    ({ server, lines, raw } = await observed());
  });
  afterAll(() => server?.stop());

  const token = () => ({ table: "flat_items", network: sandbox.devnet.network, asset: sandbox.devnet.token.address });
  const moved = (before: Exposition, after: Exposition, name: string, labels: Record<string, string>) => (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);

  test("a settlement and its replay: two deliveries, one revenue; a payment line for each", async () => {
    sandbox.resetProxy();
    const before = await scrape(server.url);
    const payer = await newPayer(sandbox.devnet, 1_000_000n);
    const url = queryUrl(server.url, FIXED_SQL);
    const first = await payer.fetch(url);
    const receipt = decodeHeader(first.headers.get("PAYMENT-RESPONSE"));
    await arrowResult(first);
    const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": payer.signatures[0]! } });
    expect(again.status).toBe(200);
    await again.arrayBuffer();
    const after = await scrape(server.url);

    expect(moved(before, after, "arrow402_payments_settled_total", { ...token(), via: "settlement" })).toBe(1);
    expect(moved(before, after, "arrow402_payments_settled_total", { ...token(), via: "replay" })).toBe(1);
    expect(moved(before, after, "arrow402_revenue_total", token())).toBe(FLAT_UNITS);
    expect(moved(before, after, "arrow402_payments_refused_total", { table: "flat_items", reason: "required" })).toBe(1);
    expect(moved(before, after, "arrow402_rows_served_total", { table: "flat_items" })).toBe(20);

    const payments = lines().filter((line) => line.event === "payment" && line.transaction === receipt.transaction);
    expect(payments.map((line) => line.via)).toEqual(["settlement", "replay"]);
    expect(payments[0]).toMatchObject({ level: "info", ...token(), amount: String(FLAT_UNITS), payer: payer.address, rows: 10 });
    // The payment header (and so its signature) appears in no line.
    const signature = JSON.parse(Buffer.from(payer.signatures[0]!, "base64").toString()).payload.signature as string;
    expect(raw.join("\n")).not.toContain(signature.slice(2, 42));
  });

  test("a payment refused on its balance, one the facilitator refuses, and a facilitator that fails", async () => {
    sandbox.resetProxy();
    const before = await scrape(server.url);
    const unfunded = await newPayer(sandbox.devnet, 0n);
    expect((await unfunded.fetch(queryUrl(server.url, FIXED_SQL))).status).toBe(402);
    sandbox.proxy.setBehaviour({ verify: { kind: "reject", invalidReason: "invalid_exact_evm_signature" } });
    const rejected = await newPayer(sandbox.devnet, 1_000_000n);
    expect((await rejected.fetch(queryUrl(server.url, FIXED_SQL))).status).toBe(402);
    sandbox.proxy.setBehaviour({ verify: { kind: "status", status: 503 } });
    const payer = await newPayer(sandbox.devnet, 1_000_000n);
    const failed = await payer.fetch(queryUrl(server.url, FIXED_SQL));
    expect(failed.status).toBe(500);
    await failed.text();
    const after = await scrape(server.url);
    expect(moved(before, after, "arrow402_payments_refused_total", { table: "flat_items", reason: "insufficient-balance" })).toBe(1);
    expect(moved(before, after, "arrow402_payments_refused_total", { table: "flat_items", reason: "not-verified" })).toBe(1);
    expect(moved(before, after, "arrow402_facilitator_errors_total", { endpoint: "verify" })).toBe(1);
    expect(moved(before, after, "arrow402_facilitator_errors_total", { endpoint: "settle" })).toBe(0);
    expect(moved(before, after, "arrow402_http_requests_total", { route: "/api/query", status: "500" })).toBe(1);
    expect(lines().filter((line) => line.event === "facilitator.error").at(-1)).toMatchObject({ level: "warn", endpoint: "verify" });
    expect(lines().filter((line) => line.event === "payment.refused").at(-1)).toMatchObject({ table: "flat_items", reason: "not-verified" });
  });
});

test("a settled payment the ledger cannot record: 500, an error line naming the transaction, and an alert metric", async () => {
  const { server, lines } = await observed();
  try {
    // The ledger refuses the write that marks the payment settled (a trigger standing in for a full disk).
    sandbox.resetProxy();
    sandbox.proxy.setBehaviour({
      settle: {
        kind: "hook",
        before: async () => {
          const ledger = new Database(server.ledgerPath, { readwrite: true });
          ledger.run("CREATE TRIGGER refuse_settlement BEFORE UPDATE ON payments BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
          ledger.close();
        },
      },
    });
    const payer = await newPayer(sandbox.devnet, 1_000_000n);
    const payToBefore = await sandbox.devnet.balanceOf(sandbox.devnet.payTo);
    const response = await payer.fetch(queryUrl(server.url, FIXED_SQL));
    expect(response.status).toBe(500);
    const text = await response.text();
    const transaction = /transaction (0x[0-9a-f]{64})/.exec(text)?.[1];
    expect(transaction).toBeDefined();
    // The money moved.
    expect(await sandbox.devnet.balanceOf(sandbox.devnet.payTo)).toBe(payToBefore + BigInt(FLAT_UNITS));

    const alert = lines().find((line) => line.event === "ledger.alert");
    expect(alert).toMatchObject({ level: "error", transaction, message: expect.stringContaining("database or disk is full") });
    expect((await scrape(server.url)).value("arrow402_ledger_alerts_total")).toBe(1);
    expect(server.unconfirmedRows()).toHaveLength(1);
  } finally {
    await server.stop();
  }
});

describe("/readyz asks the facilitator", () => {
  test("ready when /supported lists exact on the devnet; asked once however often it is polled", async () => {
    const server = await sandbox.serve();
    try {
      sandbox.resetProxy();
      for (let i = 0; i < 20; i++) {
        const response = await fetch(`${server.url}/readyz`);
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ status: "ready", checks: { database: "ok", ledger: "ok", facilitator: "ok" } });
      }
      expect(sandbox.proxy.counts.supported).toBe(1);
    } finally {
      await server.stop();
    }
  });

  test("a network the facilitator does not settle on is named", async () => {
    const tables = [{ name: "items", price_tags: [{ type: "per_row", pay_to: PAY_TO, token: "usdc/base_sepolia", amount_per_item: "0.001" }] }];
    const server = await sandbox.serve({ tables });
    try {
      const response = await fetch(`${server.url}/readyz`);
      expect(response.status).toBe(503);
      expect((await response.json()).checks.facilitator).toBe("the payment facilitator does not list the exact scheme (x402 V2) on eip155:84532");
    } finally {
      await server.stop();
    }
  });

  test("a facilitator that does not answer: 503 within the check's timeout", async () => {
    const server = await sandbox.serve();
    try {
      sandbox.resetProxy();
      sandbox.proxy.setBehaviour({ supported: { kind: "hang" } });
      const started = Date.now();
      const response = await fetch(`${server.url}/readyz`);
      expect(response.status).toBe(503);
      expect((await response.json()).checks.facilitator).toBe("the payment facilitator did not answer /supported within 2000 ms");
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await server.stop();
    }
  });

  test("an unreachable facilitator is named by origin and path", async () => {
    const server = await sandbox.serve({ facilitatorUrl: "http://127.0.0.1:1/facilitator" });
    try {
      const response = await fetch(`${server.url}/readyz`);
      expect(response.status).toBe(503);
      expect((await response.json()).checks.facilitator).toBe("The payment facilitator http://127.0.0.1:1/facilitator could not be reached for /supported.");
    } finally {
      await server.stop();
    }
  });
});
