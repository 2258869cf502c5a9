import { describe, expect, test } from "bun:test";
import { BadRequestError } from "../../src/errors.ts";
import { offersForQuery, paymentRequiredBody } from "../../src/payment/pricing.ts";
import { decodePaymentSignature, encodeHeaderJson, paymentKey } from "../../src/payment/wire.ts";
import { payingClient } from "./client.ts";
import { perRow } from "./fixtures.ts";

const resource = { url: "http://localhost/api/query?query=SELECT%20*%20FROM%20t", description: "Données — swaps", mimeType: "application/vnd.apache.arrow.stream" };
const body = paymentRequiredBody(resource, offersForQuery([perRow(2000n)], { counted: 5, limit: null }, { maxTimeoutSeconds: 300 }), "Payment required.");
const client = payingClient();
const goodHeader = await client.sign(body);
const good = JSON.parse(Buffer.from(goodHeader, "base64").toString("utf8"));

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const withPatch = (patch: (payload: any) => void) => {
  const copy = structuredClone(good);
  patch(copy);
  return encodeHeaderJson(copy);
};

describe("encodeHeaderJson", () => {
  test("is standard base64 of UTF-8 JSON", () => {
    const value = { text: "é ü — 𝄞", n: 1 };
    expect(encodeHeaderJson(value)).toBe(Buffer.from(JSON.stringify(value), "utf8").toString("base64"));
  });
});

describe("decodePaymentSignature", () => {
  test("a payload created by the x402 client decodes to itself", () => {
    const decoded = decodePaymentSignature(goodHeader);
    expect(decoded).toEqual(good);
    expect<unknown>(decoded.accepted).toEqual(body.accepts[0]!);
    expect(decoded.resource?.description).toBe("Données — swaps - 5 rows");
  });

  test("paymentKey is network|asset|from|nonce, lowercased", () => {
    const decoded = decodePaymentSignature(goodHeader);
    const auth = good.payload.authorization;
    expect(paymentKey(decoded)).toBe(`${good.accepted.network}|${good.accepted.asset}|${client.account.address}|${auth.nonce}`.toLowerCase());
    expect(paymentKey(decodePaymentSignature(withPatch((p) => (p.payload.authorization.from = auth.from.toUpperCase().replace("0X", "0x")))))).toBe(
      paymentKey(decoded),
    );
  });

  test.each([
    ["not base64", "%%%not base64%%%"],
    ["base64 of text that is not JSON", b64("hello")],
    ["JSON null", b64("null")],
    ["a JSON array", b64("[]")],
    ["empty", ""],
    ["x402Version 1", withPatch((p) => (p.x402Version = 1))],
    ["x402Version as a string", withPatch((p) => (p.x402Version = "2"))],
    ["no x402Version", withPatch((p) => delete p.x402Version)],
    ["no accepted", withPatch((p) => delete p.accepted)],
    ["accepted.amount a number", withPatch((p) => (p.accepted.amount = 2000))],
    ["accepted.amount with decimals", withPatch((p) => (p.accepted.amount = "0.01"))],
    ["accepted.maxTimeoutSeconds a string", withPatch((p) => (p.accepted.maxTimeoutSeconds = "300"))],
    ["accepted.network not eip155", withPatch((p) => (p.accepted.network = "base-sepolia"))],
    ["accepted.asset not an address", withPatch((p) => (p.accepted.asset = "USDC"))],
    ["accepted.extra a string", withPatch((p) => (p.accepted.extra = "USDC"))],
    ["no payload", withPatch((p) => delete p.payload)],
    ["no signature", withPatch((p) => delete p.payload.signature)],
    ["non-hex signature", withPatch((p) => (p.payload.signature = "0x" + "zz".repeat(65)))],
    ["odd-length signature", withPatch((p) => (p.payload.signature = p.payload.signature + "a"))],
    ["signature without 0x", withPatch((p) => (p.payload.signature = p.payload.signature.slice(2)))],
    ["no authorization", withPatch((p) => delete p.payload.authorization)],
    ["nonce too short", withPatch((p) => (p.payload.authorization.nonce = "0x1234"))],
    ["non-hex nonce", withPatch((p) => (p.payload.authorization.nonce = "0x" + "g".repeat(64)))],
    ["value with decimals", withPatch((p) => (p.payload.authorization.value = "1.5"))],
    ["negative value", withPatch((p) => (p.payload.authorization.value = "-1"))],
    ["value a number", withPatch((p) => (p.payload.authorization.value = 10000))],
    ["validBefore in exponent form", withPatch((p) => (p.payload.authorization.validBefore = "1e10"))],
    ["validAfter empty", withPatch((p) => (p.payload.authorization.validAfter = ""))],
    ["no validBefore", withPatch((p) => delete p.payload.authorization.validBefore)],
    ["from not an address", withPatch((p) => (p.payload.authorization.from = "alice"))],
    ["to too long", withPatch((p) => (p.payload.authorization.to = p.payload.authorization.to + "00"))],
    ["resource.url a number", withPatch((p) => (p.resource = { url: 5 }))],
  ])("%s → 400", (_name, header) => {
    expect(() => decodePaymentSignature(header)).toThrow(BadRequestError);
  });

  test("the 400 message names the field at fault", () => {
    expect(() => decodePaymentSignature(withPatch((p) => (p.payload.authorization.nonce = "0x12")))).toThrow(/\/payload\/authorization\/nonce/);
    expect(() => decodePaymentSignature(withPatch((p) => (p.x402Version = 1)))).toThrow(/version 2/);
  });
});
