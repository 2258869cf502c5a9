/**
 * Every facilitator's success is a settlement (ARCHITECTURE.md §6 step 6), through the real listening
 * server and the devnet: the real x402 facilitator settles on the chain, then the proxy rewrites
 * its reply into the shape another facilitator sends (the x402 Python SDK's hash without `0x`,
 * empty or missing network and payer, nulls, an id that is not a hash…). Whatever the shape, the
 * buyer gets 200 with the data and a PAYMENT-RESPONSE receipt, the ledger holds the settled row
 * with the normalised hash, and the chain shows exactly one transfer. Refusals in x402-rs' and Go's
 * shapes are 402 with nothing moved; x402-rs' 500 after an on-chain failure is an unknown outcome,
 * kept unconfirmed.
 */
import { describe, expect, test } from "bun:test";
import type { Hex } from "viem";
import type { EndpointBehaviour } from "../../devnet/index.ts";
import { PRICES, type PaidSandbox, type PaidServer, usePaidSandbox } from "../support/paid-server.ts";
import { arrowResult, decodeHeader, newPayer, queryUrl, type Payer } from "../support/paying.ts";

let sandbox: PaidSandbox;
let server: PaidServer;

usePaidSandbox((started, paid) => {
  sandbox = started;
  server = paid;
});

const FUNDS = 1_000_000n;
const SQL = "SELECT id, name FROM items WHERE id BETWEEN 20 AND 29";
const PRICE = 10n * PRICES.perItem.units;

/** The real facilitator's transaction hash for the one settlement the proxy forwarded. */
function realTransaction(): Hex {
  const settles = sandbox.proxy.upstream.filter((reply) => reply.endpoint === "settle");
  expect(settles).toHaveLength(1);
  const hash = (settles[0]!.body as { transaction: string }).transaction;
  expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
  return hash as Hex;
}

/** Exactly one transfer moved the price from the payer to pay_to, in the real transaction. */
async function expectOneTransfer(payer: Payer, transaction: Hex) {
  const { devnet } = sandbox;
  expect(await sandbox.transfersIn(transaction)).toEqual([{ from: payer.address, to: devnet.payTo, value: PRICE }]);
  expect(await devnet.balanceOf(payer.address)).toBe(FUNDS - PRICE);
}

const ledgerRowsOf = (payer: Payer) => server.ledgerRows().filter((row) => row.payer.toLowerCase() === payer.address.toLowerCase());
const unconfirmedRowsOf = (payer: Payer) => server.unconfirmedRows().filter((row) => row.payer.toLowerCase() === payer.address.toLowerCase());

/** Each case: the facilitator, how it rewrites a real success reply, and the receipt's transaction from the real hash. */
const SETTLEMENTS: [string, (reply: Record<string, any>) => unknown, (real: Hex) => string][] = [
  ["x402 Python SDK: the hash without 0x", (reply) => ({ ...reply, transaction: reply.transaction.slice(2) }), (real) => real],
  ["the hash in upper case, 0X prefix", (reply) => ({ ...reply, transaction: `0X${reply.transaction.slice(2).toUpperCase()}` }), (real) => real],
  ["the hash without 0x, in upper case", (reply) => ({ ...reply, transaction: reply.transaction.slice(2).toUpperCase() }), (real) => real],
  ["network and payer empty (x402-rs and Go leave fields empty)", (reply) => ({ ...reply, network: "", payer: "" }), (real) => real],
  ["network and payer missing", ({ network: _n, payer: _p, ...reply }) => reply, (real) => real],
  [
    "nulls for optional fields and the V2 extras amount and extensions",
    (reply) => ({ ...reply, payer: null, errorReason: null, errorMessage: null, amount: PRICE.toString(), extensions: {} }),
    (real) => real,
  ],
  ["network named another way (v1 name)", (reply) => ({ ...reply, network: "devnet" }), (real) => real],
  ["a transaction id that is not a hash, with a line break", (reply) => ({ ...reply, transaction: "settlement-42\n" }), () => "settlement-42"],
  ["no transaction at all", ({ transaction: _t, ...reply }) => reply, () => ""],
];

describe("a success:true reply in any shape is a settlement: 200, data, receipt, ledger row, one transfer", () => {
  test.each(SETTLEMENTS)("%s", async (_name, rewrite, expected) => {
    const { devnet } = sandbox;
    const payer = await newPayer(devnet, FUNDS);
    sandbox.proxy.setBehaviour({ settle: { kind: "rewrite", rewrite } });

    const response = await payer.fetch(queryUrl(server.url, SQL));
    expect(response.status).toBe(200);
    const receipt = decodeHeader(response.headers.get("PAYMENT-RESPONSE"));
    const { rows } = await arrowResult(response);
    expect(rows).toEqual(sandbox.sqliteRows(SQL));

    const real = realTransaction();
    const transaction = expected(real);
    expect(receipt).toEqual({ success: true, transaction, network: devnet.network, payer: payer.address });
    expect(ledgerRowsOf(payer)).toEqual([expect.objectContaining({ tx_hash: transaction, network: devnet.network, amount: PRICE.toString() })]);
    expect(unconfirmedRowsOf(payer)).toEqual([]);
    await expectOneTransfer(payer, real);
  });

  test("the same payment presented again is served again from the ledger, with no second transfer", async () => {
    const { devnet } = sandbox;
    const payer = await newPayer(devnet, FUNDS);
    sandbox.proxy.setBehaviour({ settle: { kind: "rewrite", rewrite: (reply) => ({ ...reply, transaction: reply.transaction.slice(2) }) } });
    const url = queryUrl(server.url, SQL);
    expect((await payer.fetch(url)).status).toBe(200);
    const real = realTransaction();

    const again = await fetch(url, { headers: { "PAYMENT-SIGNATURE": payer.signatures[0]! } });
    expect(again.status).toBe(200);
    expect(decodeHeader(again.headers.get("PAYMENT-RESPONSE"))).toMatchObject({ success: true, transaction: real });
    expect((await arrowResult(again)).rows).toEqual(sandbox.sqliteRows(SQL));
    expect(sandbox.proxy.counts.settle).toBe(1);
    await expectOneTransfer(payer, real);
  });
});

/** Refusals sent before any transaction: the proxy answers without forwarding. */
const REFUSALS: [string, EndpointBehaviour, string][] = [
  [
    "x402-rs: 400 with success:false and empty fields",
    {
      kind: "reply",
      status: 400,
      body: { success: false, network: "", transaction: "", errorReason: "invalid_exact_evm_payload_signature", errorMessage: "bad signature", payer: "" },
    },
    "invalid_exact_evm_payload_signature",
  ],
  [
    "x402-rs: 412 for an allowance problem",
    { kind: "reply", status: 412, body: { success: false, network: "", transaction: "", errorReason: "insufficient_allowance", errorMessage: "", payer: "" } },
    "insufficient_allowance",
  ],
  ["x402-rs scheme-level: 200 with error_reason in snake case", { kind: "reply", status: 200, body: { success: false, error_reason: "insufficient_funds", network: "eip155:31337" } }, "insufficient_funds"],
  ["x402 Go: 200, an aborted settlement with an empty network", { kind: "reply", status: 200, body: { success: false, errorReason: "settlement aborted by hook", network: "" } }, "settlement aborted by hook"],
  ["no reason given", { kind: "reply", status: 200, body: { success: false, transaction: "", network: "" } }, "unexpected_settle_error"],
];

describe("a refusal in any facilitator's shape is 402 with PAYMENT-RESPONSE; nothing moves, nothing is recorded", () => {
  test.each(REFUSALS)("%s", async (_name, behaviour, reason) => {
    const { devnet } = sandbox;
    const payer = await newPayer(devnet, FUNDS);
    sandbox.proxy.setBehaviour({ settle: behaviour });
    const payToBefore = await devnet.balanceOf(devnet.payTo);

    const response = await payer.fetch(queryUrl(server.url, SQL));
    expect(response.status).toBe(402);
    expect(decodeHeader(response.headers.get("PAYMENT-RESPONSE"))).toMatchObject({ success: false, errorReason: reason, network: devnet.network });
    const body = await response.text();
    for (const row of sandbox.sqliteRows(SQL)) expect(body).not.toContain(String(row.name));
    expect(sandbox.proxy.counts).toMatchObject({ verify: 1, settle: 1 });
    expect(await devnet.balanceOf(payer.address)).toBe(FUNDS);
    expect(await devnet.balanceOf(devnet.payTo)).toBe(payToBefore);
    expect(ledgerRowsOf(payer)).toEqual([]);
    expect(unconfirmedRowsOf(payer)).toEqual([]);
  });
});

test("x402-rs' 500 with success:false after an on-chain failure is an unknown outcome: 500, the attempt kept unconfirmed", async () => {
  const { devnet } = sandbox;
  const payer = await newPayer(devnet, FUNDS);
  // The money moved (the real facilitator settled), but the reply is x402-rs' OnchainFailure.
  const onchainFailure = { success: false, network: "", transaction: "", errorReason: "unexpected_error", errorMessage: "pending transaction timed out", payer: "" };
  sandbox.proxy.setBehaviour({ settle: { kind: "rewrite", status: 500, rewrite: () => onchainFailure } });

  const response = await payer.fetch(queryUrl(server.url, SQL));
  expect(response.status).toBe(500);
  expect(await response.text()).toContain("failed on /settle with HTTP 500");
  await expectOneTransfer(payer, realTransaction());
  expect(ledgerRowsOf(payer)).toEqual([]);
  expect(unconfirmedRowsOf(payer)).toEqual([expect.objectContaining({ tx_hash: "" })]);
});
