/**
 * A seller that lies about its token, as a real HTTP server on 127.0.0.1 (Bun.serve, port 0): its
 * discovery document, table document and 402 price a table in the devnet's real EIP-3009 test
 * token (6 decimals) but claim whatever the test asks — by default 18 decimals and the symbol
 * "USDC", with a quote of 5×10^16 smallest units ("0.05" if the lie were believed, 5×10^10 tokens
 * in truth). It is also greedy: any PAYMENT-SIGNATURE it receives is recorded and settled at once
 * through the devnet's real facilitator, so a payment the client should never have signed shows
 * as a real transfer on chain.
 *
 * It can also be hostile in what it answers (hostile-answers.ts): any answer to a query — names
 * and values holding terminal escape sequences, a decompression bomb, an endless body, a 402 or
 * 400 whose text would rewrite the terminal — and such text in every name and description of its
 * documents. A `free` liar answers queries without asking for payment.
 */
import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { tableFromArrays, tableToIPC } from "apache-arrow";
import type { Devnet } from "../../devnet/index.ts";
import { decodePaymentSignature, type ExactPaymentPayload } from "../../src/payment/wire.ts";

export const LIE_AMOUNT = 5n * 10n ** 16n;
export const TABLE = "trades";

export interface Lies {
  /** The offer's amount in smallest units (default LIE_AMOUNT). */
  amount?: bigint;
  /** The offer's network (default the devnet's). */
  network?: string;
  /** The token claimed in `price_tags[].token` (default 18 decimals, "USDC"). */
  decimals?: number;
  symbol?: string;
  /** Queries are answered without a 402. */
  free?: boolean;
  /** The answer to a query (after settling the payment, unless free); default one row of `id`. */
  answer?: (required: PaymentRequired) => Response;
  /** Appended to every name and description of the discovery and table documents. */
  documentText?: string;
}

export interface LyingServer {
  url: string;
  /** The offer it quotes for every query. */
  offer: PaymentRequirements;
  /** Every payment that reached it, decoded. */
  payments: ExactPaymentPayload[];
  /** The facilitator's answers to its settlements, in order. */
  settlements: unknown[];
  stop(): Promise<void>;
}

export function startLyingServer(devnet: Devnet, lies: Lies = {}): LyingServer {
  const network = lies.network ?? devnet.network;
  const chain = network.slice("eip155:".length);
  const amount = String(lies.amount ?? LIE_AMOUNT);
  const asset = devnet.token.address;
  const offer: PaymentRequirements = {
    scheme: "exact",
    network: network as PaymentRequirements["network"],
    amount,
    asset,
    payTo: devnet.payTo,
    maxTimeoutSeconds: 300,
    extra: { name: devnet.token.name, version: devnet.token.version },
  };
  const payments: ExactPaymentPayload[] = [];
  const settlements: unknown[] = [];
  const claimedToken = { chain, address: asset, decimals: lies.decimals ?? 18, symbol: lies.symbol ?? "USDC", transfer_method: "eip3009" };
  const text = lies.documentText ?? "";
  const answer = lies.answer ?? oneRow;

  const server: Bun.Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    routes: {
      "/api/": (request) =>
        Response.json({
          server: { url: new URL(request.url).origin, version: `0.1.0${text}` },
          tables: [
            {
              name: TABLE,
              description: `Trades${text}`,
              requires_payment: true,
              pricing: [{ model: "PerRow", amount_per_item: amount, token_address: asset, chain, pay_to: devnet.payTo }],
            },
          ],
        }),
      [`/api/table/${TABLE}`]: () =>
        Response.json({
          table_name: TABLE,
          description: `Trades${text}`,
          requires_payment: true,
          price_tags: [{ pay_to: devnet.payTo, pricing: { model: "PerRow", amount_per_item: amount }, token: claimedToken, is_default: true }],
          schema: { fields: [{ name: `id${text}`, data_type: `Int32${text}`, nullable: false, metadata: { description: `the id${text}` } }] },
        }),
      "/api/query": async (request) => {
        const required: PaymentRequired = {
          x402Version: 2,
          resource: { url: request.url, description: "Query execution payment - 1 rows", mimeType: "application/vnd.apache.arrow.stream" },
          accepts: [offer],
        };
        if (lies.free) return answer(required);
        const signature = request.headers.get("PAYMENT-SIGNATURE");
        if (signature === null) return paymentRequired(required);
        const payload = decodePaymentSignature(signature);
        payments.push(payload);
        const settled = await settle(devnet.facilitatorUrl, payload, offer);
        settlements.push(settled);
        if (typeof settled === "object" && settled !== null && "success" in settled && settled.success === true) {
          const response = answer(required);
          response.headers.set("PAYMENT-RESPONSE", Buffer.from(JSON.stringify(settled)).toString("base64"));
          return response;
        }
        return paymentRequired({ ...required, error: "settlement failed" });
      },
    },
    fetch: () => new Response("not found", { status: 404 }),
  });

  return {
    url: server.url.origin,
    offer,
    payments,
    settlements,
    stop: () => server.stop(true),
  };
}

function oneRow(): Response {
  const body = new Uint8Array(tableToIPC(tableFromArrays({ id: Int32Array.of(1) }), "stream"));
  return new Response(body, { headers: { "Content-Type": "application/vnd.apache.arrow.stream" } });
}

export function paymentRequired(required: PaymentRequired): Response {
  return Response.json(required, { status: 402, headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required) } });
}

async function settle(facilitatorUrl: string, paymentPayload: unknown, paymentRequirements: PaymentRequirements): Promise<unknown> {
  const response = await fetch(`${facilitatorUrl}/settle`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements }),
  });
  return response.json();
}
