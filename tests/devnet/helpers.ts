/**
 * Shared pieces of the sandbox tests: payment requirements for the devnet token, payments built
 * by the x402 client libraries as a buyer would build them, and raw facilitator calls.
 */
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { x402Client } from "@x402/fetch";
import { createPublicClient, http, type Hex, type PublicClient } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { anvil } from "viem/chains";
import { startDevnet, type Devnet } from "../../devnet/index.ts";

/** Compiling the token with solc-js takes a few seconds, longer than the default hook timeout. */
export const DEVNET_START_TIMEOUT_MS = 60_000;

export async function startTestDevnet(): Promise<{ devnet: Devnet; chain: PublicClient }> {
  const devnet = await startDevnet();
  return { devnet, chain: createPublicClient({ chain: anvil, transport: http(devnet.rpcUrl) }) };
}

export function requirementsFor(devnet: Devnet, amount: bigint, payTo: Hex = devnet.payTo): PaymentRequirements {
  return {
    scheme: "exact",
    network: devnet.network,
    amount: amount.toString(),
    asset: devnet.token.address,
    payTo,
    maxTimeoutSeconds: 300,
    extra: { name: devnet.token.name, version: devnet.token.version },
  };
}

/** A payment payload as a buyer's x402 client builds it from a 402 answer. */
export async function pay(privateKey: Hex, requirements: PaymentRequirements): Promise<PaymentPayload> {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(privateKey) });
  // The client only knows public USDC deployments; the test token is opted in explicitly.
  client.setSpendControls(false);
  return client.createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://127.0.0.1/api/query?sql=select%201", description: "test", mimeType: "application/octet-stream" },
    accepts: [requirements],
  });
}

export async function post(
  baseUrl: string,
  endpoint: "verify" | "settle",
  payload: PaymentPayload,
  requirements: PaymentRequirements,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/${endpoint}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
