/**
 * A real x402 V2 facilitator for the local chain, served over HTTP like the x402 reference
 * facilitator (coinbase/x402 examples/typescript/facilitator): `POST /verify`, `POST /settle`
 * with `{x402Version, paymentPayload, paymentRequirements}`, `GET /supported`.
 *
 * Status codes follow the reference server, which `HTTPFacilitatorClient` (@x402/core) expects:
 * whatever the facilitator library returns — including `isValid:false` and `success:false` —
 * is 200 with that JSON; a body without the two objects is 400; an exception is 500
 * `{error}`. A settlement aborted by a hook is 200 `success:false`, as in the reference.
 * Settlement is on-chain: the library broadcasts `transferWithAuthorization` and waits for the
 * receipt before answering.
 */
import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, http, publicActions, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { anvil } from "viem/chains";
import { freshNonceManager } from "./nonces.ts";

export const DEVNET_NETWORK = "eip155:31337" as const;

export interface FacilitatorServerOptions {
  rpcUrl: string;
  /** Key of the account that submits settlements and pays their gas. */
  signerPrivateKey: Hex;
  /** Fixed port; default 0 (the OS picks a free one). */
  port?: number;
  /** Called once per verify/settle with a one-line summary (the devnet script prints it). */
  log?: (line: string) => void;
  /** How long a settlement waits for its receipt before answering `settlement_pending` (default 30 s). */
  confirmationTimeoutMs?: number;
}

export interface FacilitatorServer {
  url: string;
  port: number;
  signerAddress: Hex;
  stop(): Promise<void>;
}

export function createDevnetFacilitator(rpcUrl: string, signerPrivateKey: Hex, confirmationTimeoutMs = 30_000): x402Facilitator {
  // The nonce manager hands out nonces locally, so concurrent settlements from the one signer
  // never race for the same nonce.
  const account = privateKeyToAccount(signerPrivateKey, { nonceManager: freshNonceManager() });
  // One transaction at a time up to its broadcast (receipts are still awaited concurrently): a
  // send that fails after taking its nonce (a revert found while estimating gas) would otherwise
  // leave a gap, and anvil holds every later transaction until the gap is filled, which no
  // settlement does while all of them wait for their receipts.
  let sending: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(send: () => Promise<T>): Promise<T> => {
    const sent = sending.then(send, send);
    sending = sent.catch(() => {});
    return sent;
  };
  const client = createWalletClient({
    account,
    chain: anvil,
    transport: http(rpcUrl),
    // anvil mines on every transaction; the default 4 s poll would only add latency.
    pollingInterval: 100,
  }).extend(publicActions);

  const signer = toFacilitatorEvmSigner({
    address: account.address,
    getCode: (args) => client.getCode(args),
    readContract: (args) => client.readContract({ ...args, args: args.args ?? [] } as never),
    verifyTypedData: (args) => client.verifyTypedData(args as never),
    writeContract: (args) => oneAtATime(() => client.writeContract({ ...args, args: args.args } as never)),
    sendTransaction: (args) => oneAtATime(() => client.sendTransaction(args)),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
  }, {
    // anvil mines each transaction at once; a receipt that has not come within this long
    // never will, and the caller learns it as `settlement_pending` instead of waiting 3 min.
    confirmationTimeoutMs,
  });

  // `registerExactEvmScheme` would also register x402 V1 for every public EVM network with this
  // local signer, so /supported would advertise chains the sandbox cannot settle on. We register
  // the same V2 scheme object it builds, for the local network only.
  return new x402Facilitator().register(DEVNET_NETWORK, new ExactEvmScheme(signer));
}

export function startFacilitatorServer(options: FacilitatorServerOptions): FacilitatorServer {
  const facilitator = createDevnetFacilitator(options.rpcUrl, options.signerPrivateKey, options.confirmationTimeoutMs);
  const log = options.log ?? (() => {});

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: options.port ?? 0,
    // Settlement waits for a receipt; never let the server's idle timer cut it short.
    idleTimeout: 0,
    routes: {
      "/supported": { GET: () => Response.json(facilitator.getSupported()) },
      "/verify": {
        POST: async (request) => {
          const body = await readBody(request);
          if (!body) return Response.json({ error: "Missing paymentPayload or paymentRequirements" }, { status: 400 });
          try {
            const result = await facilitator.verify(body.paymentPayload, body.paymentRequirements);
            log(`verify ${describe(body)} -> ${result.isValid ? "valid" : `invalid (${result.invalidReason})`}`);
            return Response.json(result);
          } catch (error) {
            log(`verify ${describe(body)} -> error: ${message(error)}`);
            return Response.json({ error: message(error) }, { status: 500 });
          }
        },
      },
      "/settle": {
        POST: async (request) => {
          const body = await readBody(request);
          if (!body) return Response.json({ error: "Missing paymentPayload or paymentRequirements" }, { status: 400 });
          try {
            const result = await facilitator.settle(body.paymentPayload, body.paymentRequirements);
            log(
              `settle ${describe(body)} -> ${result.success ? `settled in ${result.transaction}` : `failed (${result.errorReason})`}`,
            );
            return Response.json(result);
          } catch (error) {
            log(`settle ${describe(body)} -> error: ${message(error)}`);
            if (message(error).startsWith("Settlement aborted:")) {
              return Response.json({
                success: false,
                errorReason: message(error).replace("Settlement aborted: ", ""),
                transaction: "",
                network: body.paymentRequirements.network,
              });
            }
            return Response.json({ error: message(error) }, { status: 500 });
          }
        },
      },
    },
    fetch: () => new Response("Not Found", { status: 404 }),
  });

  const port = server.port ?? 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    signerAddress: privateKeyToAccount(options.signerPrivateKey).address,
    stop: () => server.stop(true),
  };
}

interface FacilitatorRequestBody {
  paymentPayload: PaymentPayload;
  paymentRequirements: PaymentRequirements;
}

async function readBody(request: Request): Promise<FacilitatorRequestBody | undefined> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return undefined;
  }
  if (!isObject(body) || !isObject(body.paymentPayload) || !isObject(body.paymentRequirements)) return undefined;
  return body as unknown as FacilitatorRequestBody;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(body: FacilitatorRequestBody): string {
  const { amount, asset, payTo } = body.paymentRequirements;
  return `${amount} of ${asset} to ${payTo}`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
