/**
 * The payment gate end to end: a real SQLite table for counting and running queries, the devnet's
 * x402 facilitator settling on a local chain (behind the proxy, which counts calls and can fail),
 * a real ledger file, and payments signed by @x402/fetch's client.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PaymentRequired } from "@x402/core/types";
import { startDevnet, startFacilitatorProxy, type Devnet, type FacilitatorProxy } from "../../devnet/index.ts";
import type { PriceTag, TokenInfo } from "../../src/config/types.ts";
import { BadRequestError, FacilitatorError } from "../../src/errors.ts";
import { createFacilitatorClient } from "../../src/payment/facilitator.ts";
import { createPaymentGate, type GateRequest, type GateResult, type PaymentGate, type SettleOutcome } from "../../src/payment/gate.ts";
import { openLedger, type Ledger } from "../../src/payment/ledger.ts";
import { PAYMENT_MESSAGES } from "../../src/payment/messages.ts";
import { PAYMENT_REQUIRED, PAYMENT_RESPONSE, encodeHeaderJson } from "../../src/payment/wire.ts";
import { payingClient } from "./client.ts";
import { devnetToken, fundedAccount } from "./devnet-token.ts";
import { fixed, metadata, perRow } from "./fixtures.ts";

const ARROW = "application/vnd.apache.arrow.stream";
const dir = mkdtempSync(join(tmpdir(), "arrow402-gate-"));
const data = new Database(":memory:");
data.run("CREATE TABLE swaps (id INTEGER PRIMARY KEY, amount_usd REAL)");
for (let id = 1; id <= 40; id++) data.run("INSERT INTO swaps (id, amount_usd) VALUES (?, ?)", [id, id * 1.5]);

let devnet: Devnet;
let proxy: FacilitatorProxy;
let token: TokenInfo;
let ledger: Ledger;
let clock: number | null = null;
let gate: PaymentGate;

beforeAll(async () => {
  devnet = await startDevnet();
  proxy = await startFacilitatorProxy(devnet.facilitatorUrl);
  token = devnetToken(devnet);
}, 60_000);
afterAll(async () => {
  await proxy?.stop();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let ledgerCount = 0;
beforeEach(() => {
  proxy.setBehaviour({});
  proxy.resetCounts();
  clock = null;
  ledgerCount += 1;
  ledger = openLedger(join(dir, `ledger-${ledgerCount}.sqlite`));
  gate = createPaymentGate({
    facilitator: createFacilitatorClient({ url: proxy.url, timeoutMs: 10_000 }),
    ledger,
    maxTimeoutSeconds: 300,
    now: () => clock ?? Date.now(),
  });
});

const perRowTags = (): PriceTag[] => [perRow(100n, { token, payTo: devnet.payTo, minTotalAmount: 500n })];
const fixedTags = (): PriceTag[] => [fixed(7000n, { token, payTo: devnet.payTo })];

/** A query request over the real table, counting how often the gate counts and runs it. */
function queryRequest(maxId: number, tags: PriceTag[], paymentSignature: string | null = null, runQueryEarly = true) {
  const calls = { count: 0, run: 0 };
  const sql = `SELECT * FROM swaps WHERE id <= ${maxId}`;
  const request: GateRequest = {
    tags,
    tableName: "swaps",
    query: sql,
    resource: { url: `http://localhost:4021/api/query?query=${encodeURIComponent(sql)}`, description: "DEX swaps", mimeType: ARROW },
    paymentSignature,
    runQueryEarly,
    countRows: async () => {
      calls.count += 1;
      return data.query<{ n: number }, []>(`SELECT count(*) AS n FROM (${sql})`).get()!.n;
    },
    runQuery: async () => {
      calls.run += 1;
      return { rows: data.query(sql).all().length };
    },
  };
  return { request, calls };
}

function expect402(result: GateResult | SettleOutcome) {
  if (result.kind !== "payment-required") throw new Error(`expected payment-required, got ${result.kind}`);
  expect(result.headers[PAYMENT_REQUIRED]).toBe(encodeHeaderJson(result.body));
  return result;
}

function expectVerified(result: GateResult) {
  if (result.kind !== "verified") throw new Error(`expected verified, got ${JSON.stringify(result)}`);
  return result;
}

const decodeHeader = (header: string) => JSON.parse(Buffer.from(header, "base64").toString("utf8"));

/** A funded payer's signature over the first offer of a 402 body. */
async function signFirst(body: PaymentRequired, balance = 1_000_000n) {
  const payer = await fundedAccount(devnet, balance);
  return { header: await payingClient(payer.account).sign(body), payer };
}

describe("without a payment", () => {
  test("per_row tags: count, then 402 whose description ends with the row count", async () => {
    const { request, calls } = queryRequest(12, perRowTags());
    const result = expect402(await gate.check(request));
    expect(result.body.resource.description).toBe("DEX swaps - 12 rows");
    expect(result.body.accepts.map((a) => a.amount)).toEqual(["1200"]);
    expect(result.body.error).toBe(PAYMENT_MESSAGES.required);
    expect(calls).toEqual({ count: 1, run: 0 });
    expect(proxy.requests).toEqual([]);
  });

  test("only fixed tags: 402 at once, nothing counted", async () => {
    const { request, calls } = queryRequest(12, fixedTags());
    const result = expect402(await gate.check(request));
    expect(result.body.resource.description).toBe("DEX swaps");
    expect(result.body.accepts.map((a) => a.amount)).toEqual(["7000"]);
    expect(calls).toEqual({ count: 0, run: 0 });
  });

  test("an empty result with no minimum is free", async () => {
    const { request } = queryRequest(0, [perRow(100n, { token, payTo: devnet.payTo })]);
    expect(await gate.check(request)).toEqual({ kind: "free" });
  });
});

describe("paying", () => {
  test("per_row: the query runs, is priced from its rows, verified, settled, recorded; balances move exactly", async () => {
    const first = queryRequest(25, perRowTags());
    const { body } = expect402(await gate.check(first.request));
    const { header, payer } = await signFirst(body);
    const payToBefore = await devnet.balanceOf(devnet.payTo);

    const { request, calls } = queryRequest(25, perRowTags(), header);
    const verified = expectVerified(await gate.check(request));
    expect(calls).toEqual({ count: 0, run: 1 });
    expect(verified.payer).toBe(payer.account.address);
    expect(verified.requirement.amount).toBe("2500");

    const settled = await verified.settle({ rows: 25 });
    verified.release();
    if (settled.kind !== "settled") throw new Error("expected settled");
    const response = decodeHeader(settled.paymentResponseHeader);
    expect(response).toEqual({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), network: devnet.network, payer: payer.account.address });

    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 2500n);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore + 2500n);
    expect(ledger.list()).toEqual([
      expect.objectContaining({ tableName: "swaps", query: request.query, rows: 25, amount: 2500n, transaction: response.transaction, resourceUrl: request.resource.url }),
    ]);
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 1 });
  });

  test("fixed: the query runs alongside /verify; the attempt is in the ledger before settling; settled with its rows", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header } = await signFirst(body);
    const { request, calls } = queryRequest(5, fixedTags(), header);
    const verified = expectVerified(await gate.check(request));
    expect(calls).toEqual({ count: 0, run: 1 });
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(ledger.unconfirmed()).toEqual([expect.objectContaining({ paymentKey: expect.any(String), rows: null, amount: 7000n })]);
    expect((await verified.settle({ rows: 5 })).kind).toBe("settled");
    verified.release();
    expect(ledger.unconfirmed()).toEqual([]);
    expect(ledger.list().map((e) => [e.amount, e.rows])).toEqual([[7000n, 5]]);
  });

  test("metadata: paid the same way; the ledger row has no query and no rows", async () => {
    const request: GateRequest = {
      tags: [metadata(300n, { token, payTo: devnet.payTo })],
      tableName: "swaps",
      query: null,
      resource: { url: "http://localhost:4021/api/table/swaps", description: "Table metadata", mimeType: "application/json" },
      paymentSignature: null,
    };
    const { body } = expect402(await gate.check(request));
    expect(body.resource.mimeType).toBe("application/json");
    const { header } = await signFirst(body);
    const verified = expectVerified(await gate.check({ ...request, paymentSignature: header }));
    expect((await verified.settle({ rows: null })).kind).toBe("settled");
    verified.release();
    expect(ledger.list()).toEqual([expect.objectContaining({ query: null, rows: null, amount: 300n })]);
  });
});

describe("races and replays", () => {
  test("concurrent duplicates: one is processed, the others get 402 at once without any work; exactly one settlement", async () => {
    const { body } = expect402(await gate.check(queryRequest(10, perRowTags()).request));
    const { header, payer } = await signFirst(body);
    proxy.resetCounts();

    const attempts = Array.from({ length: 5 }, () => queryRequest(10, perRowTags(), header));
    const results = await Promise.all(attempts.map(({ request }) => gate.check(request)));
    const verified = results.filter((r) => r.kind === "verified");
    const refused = results.filter((r) => r.kind === "payment-required");
    expect(verified).toHaveLength(1);
    expect(refused).toHaveLength(4);
    for (const result of refused) expect(expect402(result).body.error).toBe(PAYMENT_MESSAGES.inUse);
    expect(attempts.reduce((sum, { calls }) => sum + calls.count + calls.run, 0)).toBe(1);

    const winner = expectVerified(verified[0]!);
    const settledDuring = await Promise.all([winner.settle({ rows: 10 }), gate.check(queryRequest(10, perRowTags(), header).request)]);
    expect(settledDuring[1].kind).toBe("payment-required");
    winner.release();
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 1 });
    expect(ledger.list()).toHaveLength(1);
    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 1000n);
  });

  test("a settled payment presented again for the same resource is served again without a new charge", async () => {
    const { body } = expect402(await gate.check(queryRequest(8, perRowTags()).request));
    const { header, payer } = await signFirst(body);
    const first = expectVerified(await gate.check(queryRequest(8, perRowTags(), header).request));
    const original = await first.settle({ rows: 8 });
    first.release();
    proxy.resetCounts();

    const again = expectVerified(await gate.check(queryRequest(8, perRowTags(), header).request));
    expect(again.replay).toBe(true);
    expect(await again.settle({ rows: 8 })).toEqual(original);
    again.release();
    expect(proxy.requests).toEqual([]);
    expect(ledger.list()).toHaveLength(1);
    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 800n);
  });

  test("a settled payment presented for another resource, after it expired, or with another signature gets 402", async () => {
    const { body } = expect402(await gate.check(queryRequest(6, fixedTags()).request));
    const { header } = await signFirst(body);
    const first = expectVerified(await gate.check(queryRequest(6, fixedTags(), header).request));
    await first.settle({ rows: 6 });
    first.release();
    proxy.resetCounts();

    expect(expect402(await gate.check(queryRequest(7, fixedTags(), header).request)).body.error).toBe(PAYMENT_MESSAGES.otherResource);

    const validBefore = Number(decodeHeader(header).payload.authorization.validBefore);
    clock = validBefore * 1000;
    expect(expect402(await gate.check(queryRequest(6, fixedTags(), header).request)).body.error).toBe(PAYMENT_MESSAGES.expired);
    clock = null;

    const forged = decodeHeader(header);
    forged.payload.signature = `0x${"11".repeat(65)}`;
    const forgedHeader = encodeHeaderJson(forged);
    expect(expect402(await gate.check(queryRequest(6, fixedTags(), forgedHeader).request)).body.error).toBe(PAYMENT_MESSAGES.nonceUsed);

    expect(proxy.requests).toEqual([]);
    expect(ledger.list()).toHaveLength(1);
  });
});

describe("refusals", () => {
  test("a per_row payment for a different row count: 402 with the offers for the actual rows, facilitator never called", async () => {
    const { body } = expect402(await gate.check(queryRequest(20, perRowTags()).request));
    const { header } = await signFirst(body);
    // The same signed offer presented for a query that returns 30 rows.
    const { request, calls } = queryRequest(30, perRowTags(), header);
    const result = expect402(await gate.check(request));
    expect(calls).toEqual({ count: 0, run: 1 });
    expect(result.body.accepts.map((a) => a.amount)).toEqual(["3000"]);
    expect(result.body.resource.description).toBe("DEX swaps - 30 rows");
    expect(result.body.error).toBe(PAYMENT_MESSAGES.noMatchForRows(30));
    expect(proxy.requests).toEqual([]);
  });

  test("an accepted that matches no offer: 402 with the current offers, never 500", async () => {
    const { body } = expect402(await gate.check(queryRequest(20, fixedTags()).request));
    const cheaper = { ...body, accepts: [{ ...body.accepts[0]!, amount: "1" }] };
    const { header } = await signFirst(cheaper);
    const result = expect402(await gate.check(queryRequest(20, fixedTags(), header).request));
    expect(result.body.error).toBe(PAYMENT_MESSAGES.noMatch);
    expect(result.body.accepts).toEqual(body.accepts);
    expect(proxy.requests).toEqual([]);
  });

  test("not verified (payer without funds): 402 with the reason, nothing recorded, no attempt left", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header } = await signFirst(body, 0n);
    const result = expect402(await gate.check(queryRequest(5, fixedTags(), header).request));
    expect(result.body.error).toMatch(/^The payment was not verified \(.+\)/);
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(ledger.list()).toEqual([]);
    expect(ledger.unconfirmed()).toEqual([]);
  });

  test("an authorization that does not pay the offer's pay_to: no query work before /verify refuses it", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header } = await signFirst(body);
    const tampered = decodeHeader(header);
    tampered.payload.authorization.to = "0x000000000000000000000000000000000000dEaD";
    const { request, calls } = queryRequest(5, fixedTags(), encodeHeaderJson(tampered));
    const result = expect402(await gate.check(request));
    expect(result.body.error).toMatch(/^The payment was not verified/);
    expect(calls).toEqual({ count: 0, run: 0 });
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(ledger.unconfirmed()).toEqual([]);
  });

  test("fixed: a query that is not provably cheap does not run before /verify, which refuses the payment", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header } = await signFirst(body, 0n);
    const { request, calls } = queryRequest(5, fixedTags(), header, false);
    const result = expect402(await gate.check(request));
    expect(result.body.error).toMatch(/^The payment was not verified/);
    expect(calls).toEqual({ count: 0, run: 0 });
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(ledger.unconfirmed()).toEqual([]);
  });

  test("fixed: a query that is not provably cheap runs only once verified", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header } = await signFirst(body);
    const { request, calls } = queryRequest(5, fixedTags(), header, false);
    const verified = expectVerified(await gate.check(request));
    expect(calls).toEqual({ count: 0, run: 0 }); // the caller runs it now, before settling
    expect((await verified.settle({ rows: 5 })).kind).toBe("settled");
    verified.release();
  });

  test("fixed: a query that fails after /verify accepted the payment is never settled, and leaves no attempt", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header, payer } = await signFirst(body);
    const { request } = queryRequest(5, fixedTags(), header);
    const failing = { ...request, runQuery: async () => Promise.reject(new BadRequestError("integer overflow")) };
    await expect(gate.check(failing)).rejects.toThrow("integer overflow");
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(ledger.unconfirmed()).toEqual([]);
    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n);
    // The payment lock was released: the same payment is processed again.
    expectVerified(await gate.check(queryRequest(5, fixedTags(), header).request)).release();
  });

  test("verified but released without settling (the delivery failed): no attempt left, nothing charged", async () => {
    const { body } = expect402(await gate.check(queryRequest(9, perRowTags()).request));
    const { header, payer } = await signFirst(body);
    const verified = expectVerified(await gate.check(queryRequest(9, perRowTags(), header).request));
    expect(ledger.unconfirmed()).toHaveLength(1);
    verified.release();
    verified.release();
    expect(ledger.unconfirmed()).toEqual([]);
    expect(proxy.counts).toMatchObject({ verify: 1, settle: 0 });
    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n);
  });

  test("settlement fails: 402 with PAYMENT-RESPONSE, no ledger row, nothing moved, the payment is free again", async () => {
    const { body } = expect402(await gate.check(queryRequest(15, perRowTags()).request));
    const { header, payer } = await signFirst(body, 1500n);
    const verified = expectVerified(await gate.check(queryRequest(15, perRowTags(), header).request));
    await devnet.drain(payer.privateKey);
    const payToBefore = await devnet.balanceOf(devnet.payTo);

    const outcome = await verified.settle({ rows: 15 });
    verified.release();
    const refused = expect402(outcome);
    expect(decodeHeader(refused.headers[PAYMENT_RESPONSE]!)).toMatchObject({ success: false, network: devnet.network });
    expect(refused.body.error).toMatch(/could not be settled .* nothing was charged/);
    expect(refused.body.accepts.map((a) => a.amount)).toEqual(["1500"]);
    expect(ledger.list()).toEqual([]);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore);

    // Released: presenting it again is processed (and refused by the facilitator), not "in use".
    const again = expect402(await gate.check(queryRequest(15, perRowTags(), header).request));
    expect(again.body.error).toMatch(/^The payment was not verified/);
  });

  test("facilitator down: FacilitatorError (500), lock released, nothing recorded", async () => {
    const { body } = expect402(await gate.check(queryRequest(5, fixedTags()).request));
    const { header } = await signFirst(body);
    proxy.setBehaviour({ verify: { kind: "status", status: 502 } });
    await expect(gate.check(queryRequest(5, fixedTags(), header).request)).rejects.toBeInstanceOf(FacilitatorError);

    expect(ledger.unconfirmed()).toEqual([]);

    proxy.setBehaviour({ settle: { kind: "drop" } });
    const verified = expectVerified(await gate.check(queryRequest(5, fixedTags(), header).request));
    await expect(verified.settle({ rows: 5 })).rejects.toBeInstanceOf(FacilitatorError);
    verified.release();
    expect(ledger.list()).toEqual([]);
    // /settle was asked and never answered: the outcome is unknown, so the attempt stays.
    expect(ledger.unconfirmed()).toHaveLength(1);
  });

  test("an unconfirmed attempt whose money did move is kept when the same payment is refused later", async () => {
    // /settle answers after our client gave up: the transfer happens, we never hear of it.
    const impatient = createPaymentGate({
      facilitator: createFacilitatorClient({ url: proxy.url, timeoutMs: 300 }),
      ledger,
      maxTimeoutSeconds: 300,
    });
    const { body } = expect402(await impatient.check(queryRequest(4, fixedTags()).request));
    const { header, payer } = await signFirst(body);
    proxy.setBehaviour({ settle: { kind: "hook", before: () => Bun.sleep(600) } });
    const verified = expectVerified(await impatient.check(queryRequest(4, fixedTags(), header).request));
    await expect(verified.settle({ rows: 4 })).rejects.toBeInstanceOf(FacilitatorError);
    verified.release();
    for (let i = 0; i < 50 && (await devnet.balanceOf(payer.account.address)) === 1_000_000n; i++) await Bun.sleep(100);
    expect(await devnet.balanceOf(payer.account.address)).toBe(1_000_000n - 7000n);

    // Presented again, the facilitator refuses it (its nonce is used); the ledger keeps the row.
    proxy.setBehaviour({});
    const again = expect402(await impatient.check(queryRequest(4, fixedTags(), header).request));
    expect(again.body.error).toMatch(/^The payment was not verified/);
    expect(ledger.unconfirmed().map((e) => e.payer)).toEqual([payer.account.address]);
  }, 15_000);

  test("an undecodable header is a 400 before any work or facilitator call", async () => {
    const { request, calls } = queryRequest(5, perRowTags(), "bm90IGEgcGF5bWVudA==");
    await expect(gate.check(request)).rejects.toBeInstanceOf(BadRequestError);
    expect(calls).toEqual({ count: 0, run: 0 });
    expect(proxy.requests).toEqual([]);
  });

  test("row count outside every tier and no fixed tag: 400 naming the tiers", async () => {
    const { request } = queryRequest(30, [perRow(100n, { token, payTo: devnet.payTo, maxItems: 20 })]);
    await expect(gate.check(request)).rejects.toThrow(/at most 20 rows/);
  });
});
