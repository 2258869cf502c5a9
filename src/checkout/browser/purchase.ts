/**
 * The two requests of a purchase (ARCHITECTURE.md §6, §15), to the server the page came from: the
 * quote (the request without payment: its 402 names the offers) and the paid retry, whose
 * PAYMENT-SIGNATURE the x402 client builds from the offer the buyer chose, signed in their wallet.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { ClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { CheckoutSetup } from "../setup-types.ts";

export type Answer =
  /** 402: the offers for this request, and the server's sentence (why a payment was refused). */
  | { kind: "payment-required"; required: PaymentRequired; error: string }
  /** 200: the data (free, or paid: then with the settlement's receipt). */
  | { kind: "data"; body: Blob; receipt: SettleResponse | null }
  /** Anything else: the status and the server's sentence. */
  | { kind: "refused"; status: number; message: string };

export function requestUrl(setup: CheckoutSetup, sql: string): string {
  return setup.kind === "query" ? `/api/query?query=${encodeURIComponent(sql)}` : setup.path;
}

function mediaTypeOf(setup: CheckoutSetup, format: string): string {
  return setup.formats.find((f) => f.name === format)?.mediaType ?? "application/json";
}

async function answerOf(response: Response): Promise<Answer> {
  if (response.status === 402) {
    const header = response.headers.get("PAYMENT-REQUIRED");
    const body = (await response.json().catch(() => null)) as { error?: unknown } | null;
    if (header === null) return { kind: "refused", status: 402, message: "The server asked for a payment without saying which (no PAYMENT-REQUIRED header)." };
    const required = decodePaymentRequiredHeader(header);
    return { kind: "payment-required", required, error: typeof body?.error === "string" ? body.error : (required.error ?? "") };
  }
  if (response.ok) {
    const header = response.headers.get("PAYMENT-RESPONSE");
    return { kind: "data", body: await response.blob(), receipt: header === null ? null : decodePaymentResponseHeader(header) };
  }
  const text = (await response.text().catch(() => "")).trim();
  return { kind: "refused", status: response.status, message: text.slice(0, 2000) || response.statusText };
}

/** The request without payment: a quote (402), or the data when it is free. */
export async function requestQuote(setup: CheckoutSetup, sql: string, format: string): Promise<Answer> {
  const response = await fetch(requestUrl(setup, sql), { headers: { accept: mediaTypeOf(setup, format) }, cache: "no-store" });
  return answerOf(response);
}

/** Has the wallet sign `offer` (one of `required.accepts`) and sends the request again with the payment. */
export async function payAndFetch(setup: CheckoutSetup, sql: string, format: string, required: PaymentRequired, offer: PaymentRequirements, signer: ClientEvmSigner): Promise<Answer> {
  const client = new x402Client();
  client.register("eip155:*", new ExactEvmScheme(signer));
  // x402's spend controls know only its own assets; here the buyer has seen this exact amount and
  // chosen it, and the wallet shows it again before signing.
  client.setSpendControls(false);
  const payload = await client.createPaymentPayload({ ...required, accepts: [offer] });
  const response = await fetch(requestUrl(setup, sql), {
    headers: { accept: mediaTypeOf(setup, format), "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) },
    cache: "no-store",
  });
  return answerOf(response);
}
