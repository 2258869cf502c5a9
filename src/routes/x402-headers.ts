/**
 * The HTTP binding of x402 V2 answers (ARCHITECTURE.md §6): a 402 carries its body as JSON and the same
 * JSON base64-encoded in PAYMENT-REQUIRED; a settlement's receipt travels in PAYMENT-RESPONSE, on
 * the 200 that delivers the data and on the 402 of a failed settlement. Every 402 and every paid
 * 200 say `Cache-Control: private, no-store` (wire.ts PAID_CACHE_CONTROL); a free answer does not.
 */
import type { SettlementReceipt } from "../payment/core.ts";
import type { PaymentRequiredBody } from "../payment/pricing.ts";
import { PAID_CACHE_CONTROL, PAYMENT_REQUIRED, PAYMENT_RESPONSE, encodeHeaderJson } from "../payment/wire.ts";

export function paymentRequiredResponse(body: PaymentRequiredBody, settlement?: SettlementReceipt): Response {
  const headers: Record<string, string> = { [PAYMENT_REQUIRED]: encodeHeaderJson(body), "cache-control": PAID_CACHE_CONTROL };
  if (settlement !== undefined) headers[PAYMENT_RESPONSE] = encodeHeaderJson(settlement);
  return Response.json(body, { status: 402, headers });
}

/** PAYMENT-RESPONSE (and Cache-Control) for a paid answer; no header for a free one. */
export function paymentResponseHeaders(receipt: SettlementReceipt | null): Record<string, string> {
  return receipt === null ? {} : { [PAYMENT_RESPONSE]: encodeHeaderJson(receipt), "cache-control": PAID_CACHE_CONTROL };
}
