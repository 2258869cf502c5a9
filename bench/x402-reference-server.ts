/**
 * Item 3's baseline: the x402 reference server stack — hono with @x402/hono's paymentMiddleware
 * over an x402ResourceServer (HTTP facilitator client, exact EVM scheme for the devnet network) —
 * on Bun, selling fixed bytes (arrow402's response to the same query) at a fixed price.
 * Run as its own process: `bun bench/x402-reference-server.ts SETTINGS_JSON_FILE`.
 */
import { HTTPFacilitatorClient } from "@x402/core/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/hono";
import { Hono } from "hono";

export interface ReferenceSettings {
  facilitatorUrl: string;
  network: `${string}:${string}`;
  payTo: string;
  /** Smallest token units. */
  amount: string;
  asset: string;
  /** EIP-712 domain of the token, as arrow402 puts it in `extra`. */
  extra: { name: string; version: string };
  bodyFile: string;
  maxTimeoutSeconds: number;
}

const [settingsFile] = process.argv.slice(2);
if (settingsFile === undefined) throw new Error("usage: bun bench/x402-reference-server.ts SETTINGS_JSON_FILE");
const settings = (await Bun.file(settingsFile).json()) as ReferenceSettings;
const body = new Uint8Array(await Bun.file(settings.bodyFile).arrayBuffer());

const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: settings.facilitatorUrl })).register(
  settings.network,
  new ExactEvmScheme(),
);
const app = new Hono();
app.use(
  paymentMiddleware(
    {
      "GET /api/query": {
        accepts: {
          scheme: "exact",
          network: settings.network,
          payTo: settings.payTo,
          price: { amount: settings.amount, asset: settings.asset, extra: settings.extra },
          maxTimeoutSeconds: settings.maxTimeoutSeconds,
        },
        description: "Query execution payment",
        mimeType: "application/vnd.apache.arrow.stream",
      },
    },
    resourceServer,
  ),
);
app.get("/api/query", () => new Response(body, { headers: { "content-type": "application/vnd.apache.arrow.stream" } }));

const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: app.fetch });
console.log(`x402 reference server on http://127.0.0.1:${server.port}`);
