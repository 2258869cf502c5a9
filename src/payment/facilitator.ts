/**
 * The x402 V2 facilitator client (ARCHITECTURE.md §6 steps 5–6, §11). Its replies cross a trust boundary:
 * they are read by facilitator-replies.ts, which knows the shapes real facilitators send. A refused
 * payment is a value (`isValid:false` / `success:false`) whether sent with 200 or 4xx; a settle
 * reply saying `success: true` is a settlement whatever else it says. Anything that establishes
 * neither — unreachable, timed out, 5xx, not JSON, no `isValid`/`success` — is a FacilitatorError
 * (500). Messages name the facilitator by origin and path only: header values, URL credentials,
 * query strings and CDP keys never appear.
 */
import type { PaymentRequirements } from "@x402/core/types";
import { publicUrl } from "../config/public-url.ts";
import { FacilitatorError } from "../errors.ts";
import { cdpAuthorization, type CdpCredentials } from "./cdp-auth.ts";
import {
  readSettleReply,
  readSupportedReply,
  readVerifyReply,
  type PaymentFacts,
  type SettleResult,
  type SupportedResult,
  type VerifyResult,
} from "./facilitator-replies.ts";
import type { ExactPaymentPayload } from "./wire.ts";

export type { SettleResult, SupportedKind, SupportedResult, VerifyResult } from "./facilitator-replies.ts";

export interface FacilitatorClient {
  verify(payload: ExactPaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult>;
  settle(payload: ExactPaymentPayload, requirements: PaymentRequirements): Promise<SettleResult>;
  /** `GET /supported`: the kinds (x402 version, scheme, network) the facilitator settles. */
  supported(): Promise<SupportedResult>;
}

export interface FacilitatorOptions {
  /** May hold `user:password@` (sent as HTTP Basic) and a query string (kept on every endpoint). */
  url: string;
  timeoutMs: number;
  /** Sent with every call (e.g. Authorization); never echoed in errors. */
  headers?: Record<string, string>;
  /** Signs every call with a fresh CDP JWT (`Authorization: Bearer …`). */
  cdp?: CdpCredentials;
  /** The clock the CDP tokens are dated by (tests date them in the past to show expiry is checked). */
  now?: () => number;
}

type Endpoint = "verify" | "settle" | "supported";

/** A reply larger than this is not a facilitator answer; reading stops there. */
const MAX_REPLY_BYTES = 1024 * 1024;

export function createFacilitatorClient(opts: FacilitatorOptions): FacilitatorClient {
  const name = publicUrl(opts.url);
  const now = opts.now ?? Date.now;

  async function call(method: "GET" | "POST", endpoint: Endpoint, body?: unknown): Promise<{ status: number; json: unknown }> {
    const url = endpointUrl(opts.url, endpoint);
    const signal = AbortSignal.timeout(opts.timeoutMs);
    const headers: Record<string, string> = { ...opts.headers, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (opts.cdp !== undefined) headers.authorization = await sign(opts.cdp, method, url, endpoint);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method, headers, signal, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      text = await readBounded(response, () => `The payment facilitator ${name} answered /${endpoint} with more than ${MAX_REPLY_BYTES} bytes.`);
    } catch (error) {
      if (error instanceof FacilitatorError) throw error;
      const timedOut = signal.aborted || (error instanceof Error && error.name === "TimeoutError");
      throw new FacilitatorError(
        timedOut
          ? `The payment facilitator ${name} did not answer /${endpoint} within ${opts.timeoutMs} ms.`
          : `The payment facilitator ${name} could not be reached for /${endpoint}.`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, json };
  }

  async function sign(cdp: CdpCredentials, method: string, url: URL, endpoint: Endpoint): Promise<string> {
    try {
      return await cdpAuthorization(cdp, method, url, now());
    } catch {
      throw new FacilitatorError(`The request to the payment facilitator ${name}/${endpoint} could not be signed with facilitator.cdp; check its api_key_secret.`);
    }
  }

  /** The failure for a reply that is no answer, most specific first. */
  function failure(endpoint: Endpoint, status: number, json: unknown): FacilitatorError {
    if (status === 401 || status === 403) {
      return new FacilitatorError(
        `The payment facilitator ${name} refused our credentials on /${endpoint} (HTTP ${status}); check facilitator.cdp, facilitator.headers or the credentials in facilitator.url.`,
      );
    }
    if (status >= 500 || status < 200 || (status >= 300 && status < 400)) {
      return new FacilitatorError(`The payment facilitator ${name} failed on /${endpoint} with HTTP ${status}.`);
    }
    if (json === undefined) {
      return new FacilitatorError(`The payment facilitator ${name} answered /${endpoint} (HTTP ${status}) with a body that is not JSON.`);
    }
    return new FacilitatorError(`The payment facilitator ${name} answered /${endpoint} (HTTP ${status}) with a reply that is not an x402 V2 ${endpoint} response.`);
  }

  const request = (payload: ExactPaymentPayload, requirements: PaymentRequirements) => ({
    x402Version: 2,
    paymentPayload: payload,
    paymentRequirements: requirements,
  });
  const facts = (payload: ExactPaymentPayload, requirements: PaymentRequirements): PaymentFacts => ({
    network: requirements.network,
    from: payload.payload.authorization.from,
  });

  return {
    async verify(payload, requirements) {
      const { status, json } = await call("POST", "verify", request(payload, requirements));
      // A 5xx is the facilitator's failure even when its body says isValid:false (x402-rs sends
      // that for an RPC failure during verification).
      const result = status < 500 ? readVerifyReply(status, json, facts(payload, requirements)) : undefined;
      if (result === undefined) throw failure("verify", status, json);
      return result;
    },
    async settle(payload, requirements) {
      const { status, json } = await call("POST", "settle", request(payload, requirements));
      const result = readSettleReply(status, json, facts(payload, requirements));
      if (result === undefined) throw failure("settle", status, json);
      return result;
    },
    async supported() {
      const { status, json } = await call("GET", "supported");
      const result = status >= 200 && status < 300 ? readSupportedReply(json) : undefined;
      if (result === undefined) throw failure("supported", status, json);
      return result;
    },
  };
}

/** `{url}/{endpoint}`, keeping the URL's credentials and query string (a token may travel there). */
function endpointUrl(base: string, endpoint: Endpoint): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${endpoint}`;
  return url;
}

/** The body as text, refusing more than MAX_REPLY_BYTES: a facilitator cannot make us buffer without end. */
async function readBounded(response: Response, tooLarge: () => string): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new FacilitatorError(tooLarge());
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
