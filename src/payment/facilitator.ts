/**
 * The x402 V2 facilitator client (DESIGN.md §6 steps 5–6). Its replies cross a trust boundary and
 * are validated. A refused payment is a value (`isValid:false` / `success:false`) whether sent with
 * 200 (x402 TypeScript facilitator) or 4xx (x402-rs); anything else unexpected — unreachable,
 * timed out, 5xx, not JSON, wrong shape — is a FacilitatorError (500). Messages name the
 * facilitator by origin and path only: header values and URL credentials never appear.
 */
import Type from "typebox";
import { Compile } from "typebox/compile";
import type { PaymentRequirements } from "@x402/core/types";
import { FacilitatorError } from "../errors.ts";
import type { ExactPaymentPayload } from "./wire.ts";

/** `invalidReason` / `errorReason` are x402 reason codes; the optional messages are free text. */
export type VerifyResult =
  | { isValid: true; payer: string }
  | { isValid: false; invalidReason: string; invalidMessage?: string; payer?: string };

export type SettleResult =
  | { success: true; transaction: string; network: string; payer: string }
  | { success: false; errorReason: string; errorMessage?: string; transaction?: string; network: string; payer?: string };

export interface FacilitatorClient {
  verify(payload: ExactPaymentPayload, requirements: PaymentRequirements): Promise<VerifyResult>;
  settle(payload: ExactPaymentPayload, requirements: PaymentRequirements): Promise<SettleResult>;
}

export interface FacilitatorOptions {
  url: string;
  timeoutMs: number;
  /** Sent with every call (e.g. Authorization); never echoed in errors. */
  headers?: Record<string, string>;
}

const Optional = (schema: ReturnType<typeof Type.String>) => Type.Optional(Type.Union([schema, Type.Null()]));

const VerifyReply = Compile(
  Type.Union([
    Type.Object({ isValid: Type.Literal(true), payer: Type.String({ minLength: 1 }) }),
    Type.Object({
      isValid: Type.Literal(false),
      invalidReason: Type.String(),
      invalidMessage: Optional(Type.String()),
      payer: Optional(Type.String()),
    }),
  ]),
);

const SettleReply = Compile(
  Type.Union([
    Type.Object({
      success: Type.Literal(true),
      transaction: Type.String({ pattern: "^0x[0-9a-fA-F]{64}$" }),
      network: Type.String({ minLength: 1 }),
      payer: Type.String({ minLength: 1 }),
    }),
    Type.Object({
      success: Type.Literal(false),
      errorReason: Type.String(),
      errorMessage: Optional(Type.String()),
      transaction: Optional(Type.String()),
      network: Optional(Type.String()),
      payer: Optional(Type.String()),
    }),
  ]),
);

export function createFacilitatorClient(opts: FacilitatorOptions): FacilitatorClient {
  const base = opts.url.replace(/\/+$/, "");
  const name = displayName(base);

  async function call(endpoint: "verify" | "settle", payload: ExactPaymentPayload, requirements: PaymentRequirements) {
    let response: Response;
    let text: string;
    const signal = AbortSignal.timeout(opts.timeoutMs);
    try {
      response = await fetch(`${base}/${endpoint}`, {
        method: "POST",
        headers: { ...opts.headers, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: requirements }),
        signal,
      });
      text = await response.text();
    } catch (error) {
      const timedOut = signal.aborted || (error instanceof Error && error.name === "TimeoutError");
      throw new FacilitatorError(
        timedOut
          ? `The payment facilitator ${name} did not answer /${endpoint} within ${opts.timeoutMs} ms.`
          : `The payment facilitator ${name} could not be reached for /${endpoint}.`,
      );
    }
    if (response.status >= 500 || response.status < 200 || (response.status >= 300 && response.status < 400)) {
      throw new FacilitatorError(`The payment facilitator ${name} failed on /${endpoint} with HTTP ${response.status}.`);
    }
    try {
      return { status: response.status, body: JSON.parse(text) as unknown };
    } catch {
      throw new FacilitatorError(`The payment facilitator ${name} answered /${endpoint} (HTTP ${response.status}) with a body that is not JSON.`);
    }
  }

  const malformed = (endpoint: string, status: number) =>
    new FacilitatorError(`The payment facilitator ${name} answered /${endpoint} (HTTP ${status}) with a reply that is not an x402 V2 ${endpoint} response.`);

  return {
    async verify(payload, requirements) {
      const { status, body } = await call("verify", payload, requirements);
      // A 4xx may only carry a refusal; `isValid:true` with an error status is contradictory.
      if (!VerifyReply.Check(body) || (status >= 400 && body.isValid)) throw malformed("verify", status);
      if (body.isValid) return { isValid: true, payer: body.payer };
      return {
        isValid: false,
        invalidReason: body.invalidReason,
        ...(body.invalidMessage ? { invalidMessage: body.invalidMessage } : {}),
        ...optionalPayer(body.payer),
      };
    },
    async settle(payload, requirements) {
      const { status, body } = await call("settle", payload, requirements);
      if (!SettleReply.Check(body) || (status >= 400 && body.success)) throw malformed("settle", status);
      if (body.success) return { success: true, transaction: body.transaction, network: body.network, payer: body.payer };
      return {
        success: false,
        errorReason: body.errorReason,
        ...(body.errorMessage ? { errorMessage: body.errorMessage } : {}),
        network: body.network || requirements.network,
        ...(body.transaction ? { transaction: body.transaction } : {}),
        ...optionalPayer(body.payer),
      };
    },
  };
}

function optionalPayer(payer: string | null | undefined): { payer?: string } {
  return payer ? { payer } : {};
}

/** Origin and path, without credentials or query string (which may hold an API key). */
function displayName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    return "(invalid facilitator URL)";
  }
}
