/**
 * The facilitator client against every reply shape real facilitators send (see the sources cited in
 * src/payment/facilitator-replies.ts), served by a real HTTP server on 127.0.0.1 that answers the
 * status and body each case gives. A `success: true` settle reply is a settlement in every shape;
 * refusals are values with 2xx/4xx; only a reply that establishes neither is a FacilitatorError.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { privateKeyToAccount, generatePrivateKey } from "viem/accounts";
import { FacilitatorError } from "../../src/errors.ts";
import { createFacilitatorClient, type SettleResult, type SupportedResult, type VerifyResult } from "../../src/payment/facilitator.ts";
import { offersForQuery, paymentRequiredBody } from "../../src/payment/pricing.ts";
import { decodePaymentSignature, type ExactPaymentPayload } from "../../src/payment/wire.ts";
import type { PaymentRequirements } from "@x402/core/types";
import { payingClient } from "./client.ts";
import { fixed, USDC_BASE_SEPOLIA } from "./fixtures.ts";

const HASH = "0x" + "ab".repeat(32);
const NETWORK = USDC_BASE_SEPOLIA.network;
const OTHER_ADDRESS = "0x3333333333333333333333333333333333333333";

let reply: { status: number; body: string } = { status: 200, body: "{}" };
let server: ReturnType<typeof Bun.serve>;
let payload: ExactPaymentPayload;
let requirements: PaymentRequirements;
let from: string;

beforeAll(async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(reply.body, { status: reply.status, headers: { "content-type": "application/json" } }),
  });
  const account = privateKeyToAccount(generatePrivateKey());
  const offers = offersForQuery([fixed(1000n)], { counted: null, limit: null }, { maxTimeoutSeconds: 300 });
  const body = paymentRequiredBody({ url: "http://localhost/api/query?query=x", description: "test", mimeType: "application/json" }, offers, "");
  payload = decodePaymentSignature(await payingClient(account).sign(body));
  requirements = offers[0]!.requirement;
  from = account.address;
});
afterAll(() => server?.stop(true));

const client = () => createFacilitatorClient({ url: `http://127.0.0.1:${server.port}/facilitator`, timeoutMs: 5_000 });

type Outcome<T> = { value: (from: string) => T } | { error: RegExp };

async function outcomeOf<T>(call: () => Promise<T>): Promise<{ value: T } | { error: unknown }> {
  try {
    return { value: await call() };
  } catch (error) {
    return { error };
  }
}

function expectOutcome<T>(actual: { value: T } | { error: unknown }, expected: Outcome<T>) {
  if ("value" in expected) {
    expect(actual).toEqual({ value: expected.value(from) });
  } else {
    expect("error" in actual).toBe(true);
    const error = (actual as { error: unknown }).error;
    expect(error).toBeInstanceOf(FacilitatorError);
    expect((error as Error).message).toMatch(expected.error);
    expect((error as FacilitatorError).status).toBe(500);
  }
}

const json = (value: unknown) => JSON.stringify(value);
const settled = (transaction: string): Outcome<SettleResult> => ({ value: (payer) => ({ success: true, transaction, network: NETWORK, payer }) });
const refused = (fields: Partial<Extract<SettleResult, { success: false }>>): Outcome<SettleResult> => ({
  value: () => ({ success: false, errorReason: "unexpected_settle_error", network: NETWORK, ...fields }),
});
const success = (fields: Record<string, unknown>) => json({ success: true, transaction: HASH, network: NETWORK, payer: OTHER_ADDRESS, ...fields });
const rsRefusal = (errorReason: string) => json({ success: false, network: "", transaction: "", errorReason, errorMessage: "details", payer: "" });

// [case, HTTP status, body, outcome]
const SETTLE: [string, number, string, Outcome<SettleResult>][] = [
  // Settlements: success:true, whatever else the reply says.
  ["spec example", 200, success({}), settled(HASH)],
  ["Python SDK: hash without 0x", 200, success({ transaction: "ab".repeat(32) }), settled(HASH)],
  ["hash in upper case", 200, success({ transaction: "0x" + "AB".repeat(32) }), settled(HASH)],
  ["hash with 0X and surrounding spaces", 200, success({ transaction: " 0X" + "Ab".repeat(32) + " " }), settled(HASH)],
  ["network empty", 200, success({ network: "" }), settled(HASH)],
  ["network missing", 200, json({ success: true, transaction: HASH, payer: OTHER_ADDRESS }), settled(HASH)],
  ["network null", 200, success({ network: null }), settled(HASH)],
  ["network another chain's name: the authorization's chain is reported", 200, success({ network: "base" }), settled(HASH)],
  ["payer empty (x402-rs leaves fields empty)", 200, success({ payer: "" }), settled(HASH)],
  ["payer missing (Python's exclude_none)", 200, json({ success: true, transaction: HASH, network: NETWORK }), settled(HASH)],
  ["payer null (TS client's nullish)", 200, success({ payer: null, errorReason: null, errorMessage: null }), settled(HASH)],
  ["V2 extras amount and extensions", 200, success({ amount: "1000", extensions: { bazaar: {} } }), settled(HASH)],
  ["HTTP 201", 201, success({}), settled(HASH)],
  ["HTTP 400 with success:true: the money moved", 400, success({}), settled(HASH)],
  ["HTTP 500 with success:true: the money moved", 500, success({}), settled(HASH)],
  ["transaction empty", 200, success({ transaction: "" }), settled("")],
  ["transaction missing", 200, json({ success: true, network: NETWORK }), settled("")],
  ["transaction a number", 200, success({ transaction: 42 }), settled("")],
  ["transaction of 65 hex digits: kept as sent", 200, success({ transaction: "0x" + "a".repeat(65) }), settled("0x" + "a".repeat(65))],
  ["another chain's signature (base58): kept", 200, success({ transaction: "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW" }), settled("5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW")],
  ["transaction with spaces and control characters: stripped", 200, success({ transaction: "id 42\r\n\u0000x" }), settled("id42x")],
  ["transaction of 1,000 characters: cut to 128", 200, success({ transaction: "z".repeat(1000) }), settled("z".repeat(128))],
  // Refusals: success:false with 2xx or 4xx.
  ["spec refusal", 200, json({ success: false, errorReason: "insufficient_funds", payer: OTHER_ADDRESS, transaction: "", network: NETWORK }), refused({ errorReason: "insufficient_funds", payer: OTHER_ADDRESS })],
  ["x402-rs: 400 with empty fields", 400, rsRefusal("invalid_exact_evm_payload_signature"), refused({ errorReason: "invalid_exact_evm_payload_signature", errorMessage: "details" })],
  ["x402-rs: 412 (allowance)", 412, rsRefusal("insufficient_allowance"), refused({ errorReason: "insufficient_allowance", errorMessage: "details" })],
  ["x402-rs scheme-level: error_reason in snake case", 200, json({ success: false, error_reason: "insufficient_funds", network: NETWORK }), refused({ errorReason: "insufficient_funds" })],
  ["x402 Go: aborted, network empty, no payer", 200, json({ success: false, errorReason: "settlement aborted", network: "" }), refused({ errorReason: "settlement aborted" })],
  ["x402 TS reference: aborted, network \"unknown\", no transaction", 200, json({ success: false, errorReason: "aborted", network: "unknown" }), refused({ errorReason: "aborted" })],
  ["no reason at all", 200, json({ success: false }), refused({})],
  ["nulls everywhere", 200, json({ success: false, errorReason: null, errorMessage: null, payer: null, transaction: null, network: null }), refused({})],
  ["a reverted transaction's hash is kept", 200, json({ success: false, errorReason: "transaction_failed", transaction: "CD".repeat(32), network: NETWORK }), refused({ errorReason: "transaction_failed", transaction: "0x" + "cd".repeat(32) })],
  [
    "a multi-line, very long message: one bounded line",
    400,
    json({ success: false, errorReason: "invalid_payload\n", errorMessage: `RPC error:\n${"x".repeat(2000)}` }),
    refused({ errorReason: "invalid_payload", errorMessage: `RPC error: ${"x".repeat(488)}…` }),
  ],
  // Neither: an unknown outcome (the attempt stays unconfirmed).
  ["x402-rs: 500 with success:false after an on-chain failure", 500, rsRefusal("unexpected_error"), { error: /failed on \/settle with HTTP 500/ }],
  ["502 with an HTML page", 502, "<html>Bad Gateway</html>", { error: /HTTP 502/ }],
  ["200 with text that is not JSON", 200, "OK", { error: /not JSON/ }],
  ["200 with an empty body", 200, "", { error: /not JSON/ }],
  ["200 with an empty object", 200, "{}", { error: /not an x402 V2 settle response/ }],
  ["success as the text \"true\"", 200, json({ success: "true", transaction: HASH }), { error: /not an x402 V2 settle response/ }],
  ["a JSON list", 200, json([true]), { error: /not an x402 V2 settle response/ }],
  ["JSON null", 200, "null", { error: /not an x402 V2 settle response/ }],
  ["400 {error} (the reference server's bad request)", 400, json({ error: "Missing paymentPayload or paymentRequirements" }), { error: /HTTP 400\) with a reply that is not an x402 V2 settle response/ }],
  ["401: credentials refused", 401, json({ error: "unauthorized" }), { error: /refused our credentials on \/settle \(HTTP 401\); check facilitator\.cdp/ }],
  ["404: wrong URL", 404, json({ error: "not found" }), { error: /HTTP 404/ }],
  ["a body over 1 MiB", 200, json({ success: true, padding: "x".repeat(1_100_000) }), { error: /answered \/settle with more than 1048576 bytes/ }],
];

describe("settle: reply → outcome", () => {
  test.each(SETTLE)("%s (HTTP %d)", async (_name, status, body, expected) => {
    reply = { status, body };
    expectOutcome(await outcomeOf(() => client().settle(payload, requirements)), expected);
  });
});

const valid: Outcome<VerifyResult> = { value: (payer) => ({ isValid: true, payer }) };
const invalid = (fields: Partial<Extract<VerifyResult, { isValid: false }>>): Outcome<VerifyResult> => ({
  value: () => ({ isValid: false, invalidReason: "unexpected_verify_error", ...fields }),
});

const VERIFY: [string, number, string, Outcome<VerifyResult>][] = [
  ["spec example", 200, json({ isValid: true, payer: OTHER_ADDRESS }), valid],
  ["payer missing", 200, json({ isValid: true }), valid],
  ["payer empty, nulls", 200, json({ isValid: true, payer: "", invalidReason: null, invalidMessage: null }), valid],
  ["spec refusal", 200, json({ isValid: false, invalidReason: "insufficient_funds", payer: OTHER_ADDRESS }), invalid({ invalidReason: "insufficient_funds", payer: OTHER_ADDRESS })],
  ["x402 TS: invalidMessage", 200, json({ isValid: false, invalidReason: "invalid_signature", invalidMessage: "bad" }), invalid({ invalidReason: "invalid_signature", invalidMessage: "bad" })],
  [
    "x402-rs: 400 with invalidReasonDetails and payer \"\"",
    400,
    json({ isValid: false, invalidReason: "invalid_exact_evm_payload_signature", invalidReasonDetails: "signature mismatch", payer: "" }),
    invalid({ invalidReason: "invalid_exact_evm_payload_signature", invalidMessage: "signature mismatch" }),
  ],
  ["x402-rs: 412", 412, json({ isValid: false, invalidReason: "insufficient_allowance", invalidReasonDetails: "", payer: "" }), invalid({ invalidReason: "insufficient_allowance" })],
  ["no reason", 200, json({ isValid: false }), invalid({})],
  ["400 with isValid:true: contradictory", 400, json({ isValid: true, payer: OTHER_ADDRESS }), { error: /HTTP 400\) with a reply that is not an x402 V2 verify response/ }],
  ["500 with isValid:false (x402-rs RPC failure)", 500, json({ isValid: false, invalidReason: "unexpected_error" }), { error: /failed on \/verify with HTTP 500/ }],
  ["403: credentials refused", 403, "Forbidden", { error: /refused our credentials on \/verify \(HTTP 403\)/ }],
  ["isValid as the text \"true\"", 200, json({ isValid: "true" }), { error: /not an x402 V2 verify response/ }],
  ["not JSON", 200, "{\"isValid\": tru", { error: /not JSON/ }],
];

describe("verify: reply → outcome", () => {
  test.each(VERIFY)("%s (HTTP %d)", async (_name, status, body, expected) => {
    reply = { status, body };
    expectOutcome(await outcomeOf(() => client().verify(payload, requirements)), expected);
  });
});

describe("supported: reply → outcome", () => {
  const kind = { x402Version: 2, scheme: "exact", network: NETWORK };
  const kinds = [kind];
  const SUPPORTED: [string, number, string, { value: SupportedResult } | { error: RegExp }][] = [
    ["spec example", 200, json({ kinds, extensions: ["bazaar"], signers: { "eip155:*": [OTHER_ADDRESS] } }), { value: { kinds, extensions: ["bazaar"], signers: { "eip155:*": [OTHER_ADDRESS] } } }],
    ["kinds only (extensions and signers default to empty)", 200, json({ kinds }), { value: { kinds, extensions: [], signers: {} } }],
    ["a kind with extra", 200, json({ kinds: [{ ...kind, extra: { feePayer: "x" } }] }), { value: { kinds: [{ ...kind, extra: { feePayer: "x" } }], extensions: [], signers: {} } }],
    ["a malformed kind", 200, json({ kinds: [{ scheme: "exact" }] }), { error: /not an x402 V2 supported response/ }],
    ["no kinds", 200, json({ networks: [] }), { error: /not an x402 V2 supported response/ }],
    ["429", 429, json({ error: "slow down" }), { error: /not an x402 V2 supported response/ }],
    ["503", 503, "", { error: /failed on \/supported with HTTP 503/ }],
  ];
  test.each(SUPPORTED)("%s (HTTP %d)", async (_name, status, body, expected) => {
    reply = { status, body };
    const actual = await outcomeOf(() => client().supported());
    if ("value" in expected) expect(actual).toEqual(expected);
    else expectOutcome(actual, expected);
  });
});
