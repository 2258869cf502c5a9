/**
 * Payments that must not go through, through the real listening server (ARCHITECTURE.md §6, §8): a
 * malformed header is 400 before any facilitator call; a tampered, misdirected, expired or
 * unfunded payment is 402; a failing facilitator is 500; a failed settlement is 402 with
 * PAYMENT-RESPONSE; a query failing after verification is 400; a client whose payments the
 * chain or the facilitator keeps refusing is turned away before either is asked. In every case nothing is charged
 * (balances read on chain), no data leaves, and no ledger row is written.
 */
import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { getAddress, type Hex } from "viem";
import { authorizeTransfer, startFacilitatorProxy } from "../../devnet/index.ts";
import { type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { decodeHeader, encodePayment, newPayer, paymentRequired, queryUrl, type Payer } from "../support/paying.ts";
import { paymentRequiredOf, refusalOf } from "../mcp/support.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const PER_ROW_SQL = "SELECT id, name FROM items WHERE id BETWEEN 20 AND 29";
const FIXED_SQL = "SELECT id, name FROM flat_items WHERE id BETWEEN 20 AND 29 LIMIT 100";
const ATTACKER: Hex = "0x000000000000000000000000000000000000dEaD";

/** Balances and ledger before a payment attempt, and the check that nothing was charged after it. */
async function noChargeGuard(payer: Payer, target: PaidServer = server) {
  const { devnet } = sandbox;
  const before = {
    payer: await devnet.balanceOf(payer.address),
    payTo: await devnet.balanceOf(devnet.payTo),
    attacker: await devnet.balanceOf(ATTACKER),
    ledger: target.ledgerRows().length,
  };
  return async () => {
    expect({
      payer: await devnet.balanceOf(payer.address),
      payTo: await devnet.balanceOf(devnet.payTo),
      attacker: await devnet.balanceOf(ATTACKER),
      ledger: target.ledgerRows().length,
    }).toEqual(before);
  };
}

/** The body says nothing of the rows the query would return. */
function expectNoRowData(text: string, sql: string) {
  const names = sandbox.sqliteRows(sql).map((row) => String(row.name));
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(text).not.toContain(name);
}

async function expect402(response: Response, sql: string) {
  expect(response.status).toBe(402);
  const text = await response.text();
  expect(decodeHeader(response.headers.get("PAYMENT-REQUIRED"))).toEqual(JSON.parse(text));
  expectNoRowData(text, sql);
  return JSON.parse(text) as { error: string; accepts: { amount: string }[] };
}

async function expectTextError(response: Response, status: number, sql: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toStartWith("text/plain");
  const text = await response.text();
  expect(text.length).toBeGreaterThan(0);
  expect(text).not.toMatch(/\n\s+at /); // no stack trace
  expectNoRowData(text, sql);
  return text;
}

const send = (url: string, paymentSignature: string) => fetch(url, { headers: { "PAYMENT-SIGNATURE": paymentSignature } });

describe("a malformed PAYMENT-SIGNATURE is 400 text/plain, and the facilitator never sees it", () => {
  const cases: [string, (signed: Record<string, any>) => string][] = [
    ["not base64", () => "!!! not base64 !!!"],
    ["base64 of text that is not JSON", () => Buffer.from("hello, world").toString("base64")],
    ["JSON of the wrong shape", () => encodePayment({ x402Version: 2, accepted: {}, payload: {} })],
    ["a signature that is not hex", (signed) => encodePayment({ ...signed, payload: { ...signed.payload, signature: "0xnothex" } })],
    [
      "a nonce that is not 32 bytes of hex",
      (signed) => encodePayment({ ...signed, payload: { ...signed.payload, authorization: { ...signed.payload.authorization, nonce: "42" } } }),
    ],
    ["x402 version 1", (signed) => encodePayment({ ...signed, x402Version: 1 })],
  ];
  for (const [name, header] of cases) {
    test(name, async () => {
      const url = queryUrl(server.url, PER_ROW_SQL);
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const signed = (await payer.sign(await paymentRequired(url))) as Record<string, any>;
      const unchanged = await noChargeGuard(payer);
      await expectTextError(await send(url, header(signed)), 400, PER_ROW_SQL);
      expect(sandbox.proxy.requests).toEqual([]);
      await unchanged();
    });
  }
});

describe("a payment that does not match what is sold is 402, and nothing moves", () => {
  test("accepted.amount lowered after signing: matches no offer, refused before the facilitator", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const signed = (await payer.sign(await paymentRequired(url))) as Record<string, any>;
    const unchanged = await noChargeGuard(payer);
    const tampered = { ...signed, accepted: { ...signed.accepted, amount: "1" } };
    const body = await expect402(await send(url, encodePayment(tampered)), PER_ROW_SQL);
    expect(body.accepts.map((offer) => offer.amount)).toEqual([signed.accepted.amount]);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });

  test("authorization value lowered after signing: refused before the facilitator is asked", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const signed = (await payer.sign(await paymentRequired(url))) as Record<string, any>;
    const unchanged = await noChargeGuard(payer);
    const authorization = { ...signed.payload.authorization, value: "1" };
    const tampered = { ...signed, payload: { ...signed.payload, authorization } };
    const body = await expect402(await send(url, encodePayment(tampered)), PER_ROW_SQL);
    expect(body.error).toContain("the authorization is for 1 units");
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });

  test("both amounts lowered consistently and signed: matches no offer", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const quoted = await paymentRequired(url);
    const cheap = { ...quoted, accepts: quoted.accepts.map((offer) => ({ ...offer, amount: "1" })) };
    const signed = await payer.sign(cheap);
    const unchanged = await noChargeGuard(payer);
    await expect402(await send(url, encodePayment(signed)), PER_ROW_SQL);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });

  test("signed to another recipient (payTo changed in the offer): matches no offer", async () => {
    const url = queryUrl(server.url, FIXED_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const quoted = await paymentRequired(url);
    const redirected = { ...quoted, accepts: quoted.accepts.map((offer) => ({ ...offer, payTo: ATTACKER })) };
    const signed = await payer.sign(redirected);
    expect(getAddress((signed.payload as { authorization: { to: Hex } }).authorization.to)).toBe(getAddress(ATTACKER));
    const unchanged = await noChargeGuard(payer);
    await expect402(await send(url, encodePayment(signed)), FIXED_SQL);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });

  test("authorization.to changed after signing (accepted intact): refused before the facilitator is asked", async () => {
    const url = queryUrl(server.url, FIXED_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const signed = (await payer.sign(await paymentRequired(url))) as Record<string, any>;
    const unchanged = await noChargeGuard(payer);
    const authorization = { ...signed.payload.authorization, to: ATTACKER };
    const body = await expect402(await send(url, encodePayment({ ...signed, payload: { ...signed.payload, authorization } })), FIXED_SQL);
    expect(body.error).toContain("not the offer's payTo");
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });

  test("an unfunded payer: 402 on its balance, read on chain before the facilitator is asked; nothing settled", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, 0n);
    const unchanged = await noChargeGuard(payer);
    const body = await expect402(await payer.fetch(url), PER_ROW_SQL);
    expect(body.error).toContain("insufficient balance: the authorization's from");
    expect(payer.signatures).toHaveLength(1);
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });
});

describe("an authorization signed by hand (EIP-3009 TransferWithAuthorization with viem)", () => {
  /** The x402 V2 payload for the first offer, with the given validBefore (Unix seconds). */
  async function handSigned(payer: Payer, url: string, validBefore: bigint) {
    const quoted = await paymentRequired(url);
    const accepted = quoted.accepts[0]!;
    const { devnet } = sandbox;
    const [from, to, value, validAfter, before, nonce, signature] = await authorizeTransfer(payer.account, {
      token: { address: devnet.token.address, name: devnet.token.name, version: devnet.token.version, chainId: devnet.chainId },
      to: accepted.payTo as Hex,
      value: BigInt(accepted.amount),
      validBefore,
    });
    const authorization = { from, to, value: String(value), validAfter: String(validAfter), validBefore: String(before), nonce };
    return { price: BigInt(accepted.amount), header: encodePayment({ x402Version: 2, resource: quoted.resource, accepted, payload: { signature, authorization } }) };
  }
  const now = () => BigInt(Math.floor(Date.now() / 1000));

  test("still valid: accepted and settled (so the expired case below is refused for its time alone)", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { price, header } = await handSigned(payer, url, now() + 300n);
    const response = await send(url, header);
    expect(response.status).toBe(200);
    expect(decodeHeader(response.headers.get("PAYMENT-RESPONSE"))).toMatchObject({ success: true, payer: payer.address });
    expect(await sandbox.devnet.balanceOf(payer.address)).toBe(FUNDS - price);
  });

  test("validBefore in the past: 402, nothing settled", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { header } = await handSigned(payer, url, now() - 60n);
    const unchanged = await noChargeGuard(payer);
    const body = await expect402(await send(url, header), PER_ROW_SQL);
    expect(body.error).toContain("the authorization has expired");
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });

  test("validBefore further ahead than maxTimeoutSeconds allows: 402 before any work, nothing settled", async () => {
    const url = queryUrl(server.url, PER_ROW_SQL);
    const payer = await newPayer(sandbox.devnet, FUNDS);
    const { header } = await handSigned(payer, url, 2n ** 255n);
    const unchanged = await noChargeGuard(payer);
    const body = await expect402(await send(url, header), PER_ROW_SQL);
    expect(body.error).toContain("validBefore lies more than 300 seconds in the future");
    expect(sandbox.proxy.counts).toMatchObject({ verify: 0, settle: 0 });
    await unchanged();
  });
});

describe("a failing facilitator is 500 text/plain, and nothing is charged", () => {
  test("unreachable (connections refused)", async () => {
    const down = await startFacilitatorProxy(sandbox.devnet.facilitatorUrl);
    await down.refuseConnections();
    const target = await sandbox.serve({ facilitatorUrl: down.url });
    try {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const unchanged = await noChargeGuard(payer, target);
      const text = await expectTextError(await payer.fetch(queryUrl(target.url, PER_ROW_SQL)), 500, PER_ROW_SQL);
      expect(text).toContain("could not be reached");
      await unchanged();
    } finally {
      await target.stop();
    }
  });

  test("timed out (facilitator.timeout_ms)", async () => {
    const slow = await startFacilitatorProxy(sandbox.devnet.facilitatorUrl, { verify: { kind: "hang" } });
    const target = await sandbox.serve({ facilitatorUrl: slow.url, facilitatorTimeoutMs: 300 });
    try {
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const unchanged = await noChargeGuard(payer, target);
      const text = await expectTextError(await payer.fetch(queryUrl(target.url, PER_ROW_SQL)), 500, PER_ROW_SQL);
      expect(text).toContain("300 ms");
      expect(slow.counts).toMatchObject({ verify: 1, settle: 0 });
      await unchanged();
    } finally {
      await target.stop();
      await slow.stop();
    }
  });

  const failures = [
    ["/verify answers 503", { verify: { kind: "status", status: 503 } }, { verify: 1, settle: 0 }],
    ["/verify answers a body that is not JSON", { verify: { kind: "malformed" } }, { verify: 1, settle: 0 }],
    ["/settle answers 502", { settle: { kind: "status", status: 502 } }, { verify: 1, settle: 1 }],
    ["/settle answers JSON that is not a settle response", { settle: { kind: "wrong-shape" } }, { verify: 1, settle: 1 }],
  ] as const;
  for (const [name, behaviour, calls] of failures) {
    test(name, async () => {
      sandbox.proxy.setBehaviour(behaviour);
      const payer = await newPayer(sandbox.devnet, FUNDS);
      const unchanged = await noChargeGuard(payer);
      const attemptsBefore = server.unconfirmedRows().length;
      const text = await expectTextError(await payer.fetch(queryUrl(server.url, FIXED_SQL)), 500, FIXED_SQL);
      expect(text).toContain("facilitator");
      expect(sandbox.proxy.counts).toMatchObject(calls);
      await unchanged();
      // Once /settle was asked, its outcome is unknown to us: the attempt stays in the ledger as
      // unconfirmed (never lost), and is not counted as settled.
      const attempts = server.unconfirmedRows();
      expect(attempts).toHaveLength(attemptsBefore + calls.settle);
      if (calls.settle > 0) expect(attempts.at(-1)).toMatchObject({ payer: payer.address, tx_hash: "" });
    });
  }
});

test("settlement that fails on chain (payer drained after verify): 402 with PAYMENT-RESPONSE, no data, no ledger row", async () => {
  const { devnet } = sandbox;
  const payer = await newPayer(devnet, FUNDS);
  sandbox.proxy.setBehaviour({ settle: { kind: "hook", before: async () => void (await devnet.drain(payer.privateKey)) } });
  const payToBefore = await devnet.balanceOf(devnet.payTo);
  const ledgerBefore = server.ledgerRows().length;

  const response = await payer.fetch(queryUrl(server.url, PER_ROW_SQL));
  const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
  const body = await expect402(response, PER_ROW_SQL);
  expect(receipt).toMatchObject({ success: false, errorReason: expect.any(String), network: devnet.network });
  expect(body.error).toContain("could not be settled");
  expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
  expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore);
  expect(await devnet.balanceOf(payer.address)).toBe(0n); // drained by the hook, not paid to pay_to
  expect(server.ledgerRows()).toHaveLength(ledgerBefore);
});

// A query that fails after a fixed-price payment was verified: no-free-oracles.test.ts (one answer,
// no earlier than the time limit, never settled; a LIMIT over max_rows is refused before payment).

describe("limits.max_refused_payments_per_minute", () => {
  test("past it (refusals by the chain's balance and by the facilitator alike), a client's payments get 429 before either is asked, over HTTP and MCP; quotes and other clients go on", async () => {
    const limited = await sandbox.serve({ limits: { max_refused_payments_per_minute: 2 }, server: { trust_proxy: "X-Forwarded-For" } });
    const mcp = new Client({ name: "arrow402-tests", version: "1.0.0" });
    try {
      const url = queryUrl(limited.url, PER_ROW_SQL);
      const client = { "x-forwarded-for": "198.51.100.7" };
      // One refused on the balance the chain shows (no facilitator call), one by the facilitator.
      const unfunded = await newPayer(sandbox.devnet, 0n);
      expect((await expect402(await unfunded.fetch(url, { headers: client }), PER_ROW_SQL)).error).toContain("insufficient balance");
      expect(sandbox.proxy.counts.verify).toBe(0);
      sandbox.proxy.setBehaviour({ verify: { kind: "reject", invalidReason: "invalid_exact_evm_signature" } });
      const rejected = await newPayer(sandbox.devnet, FUNDS);
      expect((await expect402(await rejected.fetch(url, { headers: client }), PER_ROW_SQL)).error).toContain("not verified");
      expect(sandbox.proxy.counts.verify).toBe(1);
      sandbox.proxy.setBehaviour({});

      const refused = await unfunded.fetch(url, { headers: client });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await refused.text()).toBe(
        `2 payments from this client were refused or are being checked within a minute, 2 being the most (limits.max_refused_payments_per_minute): retry in ${retryAfter} s with a payment from a funded wallet`,
      );
      // The same client over MCP: the paid call is refused the same way.
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${limited.url}/mcp`), { requestInit: { headers: client } }));
      const args = { name: "query", arguments: { sql: PER_ROW_SQL } };
      const payload = await unfunded.sign(paymentRequiredOf((await mcp.callTool(args)) as CallToolResult));
      const paid = refusalOf((await mcp.callTool({ ...args, _meta: { "x402/payment": payload } })) as CallToolResult);
      expect(paid.status).toBe(429);
      expect(paid.error).toContain("limits.max_refused_payments_per_minute");
      expect(sandbox.proxy.counts.verify).toBe(1);

      // An unpaid request is still quoted; another client still pays.
      expect((await fetch(url, { headers: client })).status).toBe(402);
      const funded = await newPayer(sandbox.devnet, FUNDS);
      expect((await funded.fetch(url, { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(200);
      expect(sandbox.proxy.counts.verify).toBe(2);
      // Only the funded purchase is in the ledger.
      expect(limited.ledgerRows().map((row) => row.payer.toLowerCase())).toEqual([funded.address.toLowerCase()]);
    } finally {
      await mcp.close();
      await limited.stop();
    }
  });
});
