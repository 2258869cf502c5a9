/**
 * The buyer's signing key and the payment header. The key is read from an environment variable
 * (never a command-line argument, which other users can see), is checked by shape before viem
 * sees it, and never appears in any message: errors from signing are reported without their text,
 * and `redact` is the last guard over everything the CLI prints.
 *
 * Signing is @x402/core's x402Client with the exact EVM scheme (EIP-712 TransferWithAuthorization,
 * EIP-3009). Its own offer selection and spend controls are bypassed on purpose: the offer and the
 * budget are decided explicitly (offers.ts), and the client only ever sees the chosen offer.
 */
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export const DEFAULT_KEY_ENV = "ARROW402_PRIVATE_KEY";

export interface SigningKey {
  /** The variable it came from, for messages. */
  env: string;
  address: Hex;
  /** The secret; only `signPayment` and `redact` read it. */
  readonly secret: Hex;
}

export type KeyRead = { ok: true; key: SigningKey } | { ok: false; reason: string };

export function readSigningKey(env: Record<string, string | undefined>, name: string): KeyRead {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") {
    return { ok: false, reason: `no signing key: set the environment variable ${name} to the payer's private key (0x + 64 hex digits)` };
  }
  const secret = (raw.startsWith("0x") ? raw : `0x${raw}`) as Hex;
  if (!/^0x[0-9a-fA-F]{64}$/.test(secret)) {
    return { ok: false, reason: `the environment variable ${name} does not hold a private key: expected 0x followed by 64 hex digits` };
  }
  try {
    return { ok: true, key: { env: name, address: privateKeyToAccount(secret).address, secret } };
  } catch {
    return { ok: false, reason: `the environment variable ${name} does not hold a valid secp256k1 private key` };
  }
}

export type Signed = { ok: true; header: string; payload: PaymentPayload } | { ok: false; reason: string };

/** Signs exactly `offer` of the 402 and returns the PAYMENT-SIGNATURE header value. */
export async function signPayment(required: PaymentRequired, offer: PaymentRequirements, key: SigningKey): Promise<Signed> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key.secret) });
  // Budget and choice are enforced before this call; x402's defaults would refuse unknown assets.
  client.setSpendControls(false);
  try {
    const payload = await client.createPaymentPayload({ ...required, accepts: [offer] });
    return { ok: true, header: encodePaymentSignatureHeader(payload), payload };
  } catch (error) {
    const reason = error instanceof Error ? redact(error.message, key.secret) : "unknown error";
    return { ok: false, reason: `could not sign the payment: ${reason}` };
  }
}

/**
 * Removes a secret (a key's hex, with or without 0x, any case; or any other raw value) from text
 * that is about to be shown.
 */
export function redact(text: string, secret: string | undefined): string {
  const bare = secret?.trim().replace(/^0x/i, "") ?? "";
  if (bare.length < 8) return text;
  const escaped = bare.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(0x)?${escaped}`, "gi"), "[redacted]");
}
