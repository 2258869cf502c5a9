/**
 * The paying client: an x402 V2 client (exact EVM scheme, spend controls off because the devnet
 * token is not a known asset) that signs a fresh authorization for every payment. Only the
 * request carrying PAYMENT-SIGNATURE is timed; getting the 402 and signing are not. Every request
 * asks for an uncompressed body (Bun's fetch would otherwise ask for zstd), as the x402
 * reference server sends.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { shortUrl } from "./arrow-client.ts";

export const IDENTITY = { "accept-encoding": "identity" } as const;

export interface PaidRead {
  /** The request carrying PAYMENT-SIGNATURE: from sending it to the last body byte. */
  paidMs: number;
  /** The unpaid request that returned the 402. */
  quoteMs: number;
  body: Uint8Array;
  required: PaymentRequired;
}

export interface Quote {
  required: PaymentRequired;
  ms: number;
}

/** The unpaid request: must be a 402 with PAYMENT-REQUIRED. */
export async function quote(url: string): Promise<Quote> {
  const start = performance.now();
  const response = await fetch(url, { headers: IDENTITY });
  const body = await response.text();
  const ms = performance.now() - start;
  const header = response.headers.get("PAYMENT-REQUIRED");
  if (response.status !== 402 || header === null) throw new Error(`${shortUrl(url)}: expected 402 with PAYMENT-REQUIRED, got ${response.status} ${body.slice(0, 300)}`);
  return { required: decodePaymentRequiredHeader(header), ms };
}

/** The request carrying `payload`, read to the end; throws unless it is 200 with a successful settlement. */
export async function sendPaid(url: string, payload: PaymentPayload): Promise<{ ms: number; body: Uint8Array }> {
  const headers = { ...IDENTITY, "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) };
  const start = performance.now();
  const response = await fetch(url, { headers });
  const body = new Uint8Array(await response.arrayBuffer());
  const ms = performance.now() - start;
  const settlement = response.headers.get("PAYMENT-RESPONSE");
  if (response.status !== 200 || settlement === null || !decodePaymentResponseHeader(settlement).success) {
    throw new Error(`${shortUrl(url)}: paid request got ${response.status}: ${new TextDecoder().decode(body.subarray(0, 300))}`);
  }
  return { ms, body };
}

/** The request carrying `payload`, which must be refused with 402 (and no data). */
export async function sendRefused(url: string, payload: PaymentPayload): Promise<string> {
  const headers = { ...IDENTITY, "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) };
  const response = await fetch(url, { headers });
  const body = await response.text();
  if (response.status !== 402) throw new Error(`${shortUrl(url)}: a payment that cannot settle got ${response.status}, expected 402: ${body.slice(0, 300)}`);
  return body;
}

export function createPayer(privateKey: Hex) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey) });
  client.setSpendControls(false);

  /** A fresh signed authorization for the first offer of `required`. */
  const sign = (required: PaymentRequired): Promise<PaymentPayload> => client.createPaymentPayload(required);

  /** 402 → sign the first offer → paid request, read to the end; throws unless settled. */
  async function pay(url: string, between?: () => void): Promise<PaidRead> {
    const { required, ms: quoteMs } = await quote(url);
    between?.();
    const payload = await sign(required);
    const { ms: paidMs, body } = await sendPaid(url, payload);
    return { paidMs, quoteMs, body, required };
  }

  return { sign, pay };
}

export type Payer = ReturnType<typeof createPayer>;

/**
 * `payload` with its signature replaced by `foreign`, a valid ECDSA signature of another message
 * by another key: well formed, but it does not recover to `authorization.from`.
 */
export function withForeignSignature(payload: PaymentPayload, foreign: string): PaymentPayload {
  const inner = payload.payload as { signature: string; authorization: unknown };
  if (inner.signature === foreign) throw new Error("the foreign signature is the payload's own");
  return { ...payload, payload: { ...inner, signature: foreign } };
}

/** `payload` with another EIP-3009 nonce (its signature no longer matches it). */
export function withNonce(payload: PaymentPayload, nonce: string): PaymentPayload {
  const inner = payload.payload as { signature: string; authorization: Record<string, string> };
  return { ...payload, payload: { ...inner, authorization: { ...inner.authorization, nonce } } };
}
