/**
 * A real x402 V2 client for the tests: @x402/fetch's x402Client with the exact EVM scheme, signing
 * with a viem account. Spend controls are off because the test tokens are not x402's known assets.
 */
import { x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import type { PaymentRequired } from "@x402/core/types";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { encodeHeaderJson } from "../../src/payment/wire.ts";

export function payingClient(account: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey())) {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  client.setSpendControls(false);
  return {
    account,
    /** The PAYMENT-SIGNATURE header value for the first offer of a 402 body (x402's default choice). */
    async sign(required: PaymentRequired): Promise<string> {
      return encodeHeaderJson(await client.createPaymentPayload(required));
    },
  };
}
