/**
 * Reading a 402 (x402 V2 transport, ARCHITECTURE.md §6): the `PAYMENT-REQUIRED` header (base64 JSON),
 * else the JSON body, which carry the same document. The server is a trust boundary for the
 * buyer: only well-formed offers are considered, so an amount shown is the amount signed.
 */
import Type from "typebox";
import { Compile } from "typebox/compile";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { PAYMENT_REQUIRED, PAYMENT_RESPONSE } from "../payment/wire.ts";

const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" });

const Requirement = Type.Object({
  scheme: Type.String(),
  network: Type.String(),
  amount: Type.String({ pattern: "^[0-9]{1,78}$" }),
  asset: Address,
  payTo: Address,
  maxTimeoutSeconds: Type.Integer({ minimum: 1 }),
  extra: Type.Record(Type.String(), Type.Unknown()),
});

const PaymentRequiredDocument = Type.Object({
  x402Version: Type.Literal(2),
  error: Type.Optional(Type.String()),
  resource: Type.Object({
    url: Type.String(),
    description: Type.Optional(Type.String()),
    mimeType: Type.Optional(Type.String()),
  }),
  accepts: Type.Array(Type.Unknown()),
  extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const checkDocument = Compile(PaymentRequiredDocument);
const checkRequirement = Compile(Requirement);

export type PaymentRequiredRead =
  | { ok: true; required: PaymentRequired }
  | { ok: false; reason: string };

/** The 402's document with only its well-formed offers; `reason` when there is none at all. */
export function readPaymentRequired(headers: Headers, body: Uint8Array): PaymentRequiredRead {
  const document = decodeDocument(headers, body);
  if (!checkDocument.Check(document)) {
    return { ok: false, reason: "the server answered 402 without an x402 version 2 payment document" };
  }
  const accepts = document.accepts.filter((offer): offer is PaymentRequirements => checkRequirement.Check(offer));
  return { ok: true, required: { ...(document as PaymentRequired), accepts } };
}

function decodeDocument(headers: Headers, body: Uint8Array): unknown {
  const header = headers.get(PAYMENT_REQUIRED);
  if (header !== null) {
    try {
      return decodePaymentRequiredHeader(header.trim());
    } catch {
      // fall through to the body, which carries the same document
    }
  }
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    return null;
  }
}

/** The settlement receipt of a 200 (or of a failed settlement's 402), or null. */
export function readPaymentResponse(headers: Headers): SettleResponse | null {
  const header = headers.get(PAYMENT_RESPONSE);
  if (header === null) return null;
  try {
    const decoded: unknown = decodePaymentResponseHeader(header.trim());
    return typeof decoded === "object" && decoded !== null && "success" in decoded ? (decoded as SettleResponse) : null;
  } catch {
    return null;
  }
}

/** The row count the server quoted: its `resource.description` ends with " - N rows" (§6). */
export function quotedRows(required: PaymentRequired): number | null {
  const match = / - (\d+) rows?$/.exec(required.resource.description ?? "");
  return match ? Number(match[1]) : null;
}
