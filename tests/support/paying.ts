/**
 * The buyer's side of the end-to-end payment tests: @x402/fetch's `wrapFetchWithPayment` over an
 * `x402Client` with the exact EVM scheme, signing with a viem account, as a real client pays. The
 * fetch underneath records every PAYMENT-SIGNATURE it sends, so tests can present a payment again.
 */
import { tableFromIPC, type Table } from "apache-arrow";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import type { Devnet } from "../../devnet/index.ts";

export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

export interface Payer {
  privateKey: Hex;
  account: PrivateKeyAccount;
  address: Hex;
  /** fetch that answers a 402 by paying the first offer and retrying, as @x402/fetch does. */
  fetch: (input: string, init?: RequestInit) => Promise<Response>;
  /** Every PAYMENT-SIGNATURE header the paying fetch has sent, in order. */
  signatures: string[];
  /** Signs the first offer of a 402 body (x402's default choice) without sending it. */
  sign(required: PaymentRequired): Promise<PaymentPayload>;
}

/** A fresh account holding `balance` test tokens (smallest units); 0 leaves it unfunded. */
export async function newPayer(devnet: Devnet, balance: bigint): Promise<Payer> {
  const privateKey = generatePrivateKey();
  const account = privateKeyToAccount(privateKey);
  if (balance > 0n) await devnet.fund(account.address, balance);
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  // The devnet token is not one of x402's known assets.
  client.setSpendControls(false);
  const signatures: string[] = [];
  const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const signature = request.headers.get("PAYMENT-SIGNATURE");
    if (signature !== null) signatures.push(signature);
    return fetch(request);
  }) as typeof fetch;
  return {
    privateKey,
    account,
    address: account.address,
    fetch: wrapFetchWithPayment(recording, client),
    signatures,
    sign: (required) => client.createPaymentPayload(required),
  };
}

/** Standard base64 of the JSON, as a PAYMENT-SIGNATURE header (x402 V2). */
export function encodePayment(payload: unknown): string {
  return Buffer.from(JSON.stringify(payload), "utf8").toString("base64");
}

/** Decodes a PAYMENT-REQUIRED or PAYMENT-RESPONSE header. */
export function decodeHeader(header: string | null): any {
  if (header === null) throw new Error("expected an x402 header, got none");
  return JSON.parse(Buffer.from(header, "base64").toString("utf8"));
}

/** The query URL as WHATWG URL normalises it (e.g. `'` → `%27`), i.e. as the server sees it. */
export function queryUrl(baseUrl: string, sql: string): string {
  return new URL(`${baseUrl}/api/query?query=${encodeURIComponent(sql)}`).href;
}

/** Decodes an Arrow IPC stream response into its table and plain rows. */
export async function arrowResult(response: Response): Promise<{ table: Table; rows: Record<string, unknown>[] }> {
  expect200Arrow(response);
  const table = tableFromIPC(new Uint8Array(await response.arrayBuffer()));
  return { table, rows: table.toArray().map((row) => ({ ...row.toJSON() })) };
}

function expect200Arrow(response: Response): void {
  if (response.status !== 200 || response.headers.get("content-type") !== ARROW_STREAM) {
    throw new Error(`expected 200 ${ARROW_STREAM}, got ${response.status} ${response.headers.get("content-type")}`);
  }
}

/** Fetches without payment and returns the 402's body, checking it equals the PAYMENT-REQUIRED header. */
export async function paymentRequired(url: string, init?: RequestInit): Promise<PaymentRequired & { error: string }> {
  const response = await fetch(url, init);
  if (response.status !== 402) throw new Error(`expected 402, got ${response.status}: ${await response.text()}`);
  const body = await response.json();
  const header = decodeHeader(response.headers.get("PAYMENT-REQUIRED"));
  if (JSON.stringify(header) !== JSON.stringify(body)) throw new Error("PAYMENT-REQUIRED header and 402 body differ");
  return body;
}
