/**
 * x402 V2 over HTTP (ARCHITECTURE.md §6): header names, the base64 JSON encoding, and the decoding and
 * validation of `PAYMENT-SIGNATURE`, a trust boundary. A header that does not decode into a
 * well-formed `exact` EVM payload is the client's mistake (400, §8), found before any facilitator
 * call: the facilitator only ever sees well-formed payloads.
 */
import { decodePaymentSignatureHeader } from "@x402/core/http";
import { BadRequestError } from "../errors.ts";
import { parsePaymentPayload, type ExactPaymentPayload } from "./payload.ts";

export { paymentKey, type ExactPaymentPayload } from "./payload.ts";

export const PAYMENT_REQUIRED = "PAYMENT-REQUIRED";
export const PAYMENT_SIGNATURE = "PAYMENT-SIGNATURE";
export const PAYMENT_RESPONSE = "PAYMENT-RESPONSE";

/**
 * `Cache-Control` of every paid answer and every 402, over HTTP and MCP (DESIGN.md §17): no cache
 * keeps one buyer's paid result for another, nor a quote (its price follows the data) or a refusal.
 */
export const PAID_CACHE_CONTROL = "private, no-store";

/**
 * Standard base64 of the UTF-8 JSON of `value`: the encoding of every x402 V2 header. The same
 * bytes as @x402/core's `safeBase64Encode`, which builds a string per byte (a 402 body is ~1 KB).
 */
export function encodeHeaderJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

/**
 * The request's `PAYMENT-SIGNATURE`, or null. A HEAD request never pays: HEAD is safe (RFC 9110
 * §9.3.2) and settling is not, and it would deliver no body for the money. Its header is not read,
 * and it gets the headers an unpaid GET gets (a 402 with PAYMENT-REQUIRED on a paid resource).
 */
export function paymentSignatureOf(request: Request): string | null {
  return request.method === "HEAD" ? null : request.headers.get(PAYMENT_SIGNATURE);
}

/** Decodes and validates a `PAYMENT-SIGNATURE` header; BadRequestError (400) saying what is wrong. */
export function decodePaymentSignature(header: string): ExactPaymentPayload {
  let decoded: unknown;
  try {
    decoded = decodePaymentSignatureHeader(header.trim());
  } catch {
    throw new BadRequestError(
      "The PAYMENT-SIGNATURE header is not standard base64 of a JSON payment payload: send the payload your x402 client created, unchanged.",
    );
  }
  return parsePaymentPayload(decoded, "PAYMENT-SIGNATURE header");
}
