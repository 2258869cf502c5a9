/**
 * The paying client of item 5: an x402 V2 client (exact EVM scheme, spend controls off because
 * the devnet token is not a known asset) that signs a fresh authorization for every request.
 * Only the request carrying PAYMENT-SIGNATURE is timed; getting the 402 and signing are not.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export interface PaidRead {
  /** The request carrying PAYMENT-SIGNATURE: from sending it to the last body byte. */
  paidMs: number;
  /** The unpaid request that returned the 402. */
  quoteMs: number;
  body: Uint8Array;
  required: PaymentRequired;
}

export function createPayer(privateKey: Hex) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey) });
  client.setSpendControls(false);

  async function quote(url: string): Promise<{ required: PaymentRequired; ms: number }> {
    const start = performance.now();
    const response = await fetch(url);
    await response.arrayBuffer();
    const ms = performance.now() - start;
    const header = response.headers.get("PAYMENT-REQUIRED");
    if (response.status !== 402 || header === null) throw new Error(`${url}: expected 402 with PAYMENT-REQUIRED, got ${response.status}`);
    return { required: decodePaymentRequiredHeader(header), ms };
  }

  /** 402 → sign the first offer → paid request, read to the end; throws unless settled. */
  async function pay(url: string, between?: () => void): Promise<PaidRead> {
    const { required, ms: quoteMs } = await quote(url);
    between?.();
    const payload = await client.createPaymentPayload(required);
    const headers = { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) };
    const start = performance.now();
    const response = await fetch(url, { headers });
    const body = new Uint8Array(await response.arrayBuffer());
    const paidMs = performance.now() - start;
    const settlement = response.headers.get("PAYMENT-RESPONSE");
    if (response.status !== 200 || settlement === null || !decodePaymentResponseHeader(settlement).success) {
      throw new Error(`${url}: paid request got ${response.status}: ${new TextDecoder().decode(body.subarray(0, 300))}`);
    }
    return { paidMs, quoteMs, body, required };
  }

  return { quote, pay };
}

export type Payer = ReturnType<typeof createPayer>;
