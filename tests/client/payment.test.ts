/**
 * The buyer's half of x402 V2 against a real server's 402: reading offers, signing exactly the
 * chosen one (the server's own decoder accepts it and its `accepted` equals the offer), and
 * keeping the key out of every message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { quotedRows, readPaymentRequired } from "../../src/client/payment-required.ts";
import { readSigningKey, redact, signPayment } from "../../src/client/signer.ts";
import { decodePaymentSignature } from "../../src/payment/wire.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createTypesDatabase, tempDir, typesConfig } from "../support/fixtures.ts";

const dir = tempDir("arrow402-client-payment-");
let server: RunningServer;
let quote: { headers: Headers; body: Uint8Array };

beforeAll(async () => {
  createTypesDatabase(join(dir, "types.sqlite"));
  server = await startServer(typesConfig(dir), { workers: 1 });
  const response = await fetch(`${server.url}/api/query?query=${encodeURIComponent("SELECT * FROM items WHERE id <= 24")}`);
  expect(response.status).toBe(402);
  quote = { headers: response.headers, body: new Uint8Array(await response.arrayBuffer()) };
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function required(): PaymentRequired {
  const read = readPaymentRequired(quote.headers, quote.body);
  if (!read.ok) throw new Error(read.reason);
  return read.required;
}

describe("reading a 402", () => {
  test("the header's offers and the quoted row count", () => {
    const doc = required();
    expect(doc.accepts).toHaveLength(1);
    expect(doc.accepts[0]).toMatchObject({ scheme: "exact", network: "eip155:84532", amount: String(24 * 1000) });
    expect(quotedRows(doc)).toBe(24);
  });

  test("the body is read when the header is missing; malformed offers are dropped", () => {
    const doc = required();
    const tampered = { ...doc, accepts: [{ ...doc.accepts[0], amount: "1.5" }, { ...doc.accepts[0], asset: "USDC" }, doc.accepts[0]] };
    const read = readPaymentRequired(new Headers(), new TextEncoder().encode(JSON.stringify(tampered)));
    expect(read.ok && read.required.accepts).toEqual([doc.accepts[0]!]);
    const fromHeader = readPaymentRequired(new Headers({ "PAYMENT-REQUIRED": encodePaymentRequiredHeader(doc) }), new Uint8Array());
    expect(fromHeader.ok && fromHeader.required).toEqual(doc);
  });

  test("not an x402 version 2 document", () => {
    expect(readPaymentRequired(new Headers(), new TextEncoder().encode("Payment Required")).ok).toBe(false);
    const v1 = JSON.stringify({ ...required(), x402Version: 1 });
    expect(readPaymentRequired(new Headers(), new TextEncoder().encode(v1)).ok).toBe(false);
  });
});

describe("signing", () => {
  test("the header carries exactly the chosen offer, signed by the key's address", async () => {
    const secret = generatePrivateKey();
    const key = readSigningKey({ KEY: secret }, "KEY");
    if (!key.ok) throw new Error(key.reason);
    const doc = required();
    const signed = await signPayment(doc, doc.accepts[0]!, key.key);
    if (!signed.ok) throw new Error(signed.reason);
    const payload = decodePaymentSignature(signed.header);
    expect(payload.accepted as unknown).toEqual(doc.accepts[0]);
    expect(payload.payload.authorization.from).toBe(privateKeyToAccount(secret).address);
    expect(payload.payload.authorization.value).toBe(doc.accepts[0]!.amount);
    expect(payload.resource?.url).toBe(doc.resource.url);
    expect(signed.header).not.toContain(secret.slice(2));
  });
});

describe("the key never shows", () => {
  test("missing or malformed keys are named by their variable only", () => {
    expect(readSigningKey({}, "ARROW402_PRIVATE_KEY")).toEqual({
      ok: false,
      reason: "no signing key: set the environment variable ARROW402_PRIVATE_KEY to the payer's private key (0x + 64 hex digits)",
    });
    const short = "0x" + "ab".repeat(31);
    const read = readSigningKey({ K: short }, "K");
    expect(read.ok).toBe(false);
    expect(!read.ok && read.reason).not.toContain("abab");
    const zero = readSigningKey({ K: "0x" + "0".repeat(64) }, "K");
    expect(zero.ok).toBe(false);
  });

  test("a key without 0x is accepted", () => {
    const secret = generatePrivateKey();
    const read = readSigningKey({ K: secret.slice(2) }, "K");
    expect(read.ok && read.key.address).toBe(privateKeyToAccount(secret).address);
  });

  test("redact removes the key in any case, with or without 0x", () => {
    const secret = generatePrivateKey();
    const text = `a ${secret} b ${secret.slice(2).toUpperCase()} c`;
    expect(redact(text, secret)).toBe("a [redacted] b [redacted] c");
    expect(redact("short", "0x12")).toBe("short");
    expect(redact("nothing here", undefined)).toBe("nothing here");
  });
});
