/**
 * x402 V2 over HTTP (DESIGN.md §6): header names, the base64 JSON encoding, and the decoding and
 * validation of `PAYMENT-SIGNATURE`, a trust boundary. A header that does not decode into a
 * well-formed `exact` EVM payload is the client's mistake (400, §8), found before any facilitator
 * call: the facilitator only ever sees well-formed payloads.
 */
import Type, { type Static } from "typebox";
import { Compile } from "typebox/compile";
import { decodePaymentSignatureHeader } from "@x402/core/http";
import { BadRequestError } from "../errors.ts";

export const PAYMENT_REQUIRED = "PAYMENT-REQUIRED";
export const PAYMENT_SIGNATURE = "PAYMENT-SIGNATURE";
export const PAYMENT_RESPONSE = "PAYMENT-RESPONSE";

/**
 * Standard base64 of the UTF-8 JSON of `value`: the encoding of every x402 V2 header. The same
 * bytes as @x402/core's `safeBase64Encode`, which builds a string per byte (a 402 body is ~1 KB).
 */
export function encodeHeaderJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}

const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" });
/** uint256 in decimal: at most 78 digits. */
const Uint = Type.String({ pattern: "^[0-9]{1,78}$" });
/** 65-byte ECDSA signatures, and longer ERC-1271 / ERC-6492 ones: whole bytes of hex. */
const HexBytes = Type.String({ pattern: "^0x([0-9a-fA-F]{2})+$" });
const Bytes32 = Type.String({ pattern: "^0x[0-9a-fA-F]{64}$" });

const RequirementSchema = Type.Object({
  scheme: Type.String(),
  network: Type.Unsafe<`eip155:${string}`>(Type.String({ pattern: "^eip155:[0-9]+$" })),
  amount: Uint,
  asset: Address,
  payTo: Address,
  maxTimeoutSeconds: Type.Integer({ minimum: 0 }),
  extra: Type.Record(Type.String(), Type.Unknown()),
});

/** The `exact` EVM payload signed under EIP-3009 (`transferWithAuthorization`). */
const PaymentPayloadSchema = Type.Object({
  x402Version: Type.Integer(),
  accepted: RequirementSchema,
  payload: Type.Object({
    signature: HexBytes,
    authorization: Type.Object({
      from: Address,
      to: Address,
      value: Uint,
      validAfter: Uint,
      validBefore: Uint,
      nonce: Bytes32,
    }),
  }),
  resource: Type.Optional(
    Type.Object({
      url: Type.String(),
      description: Type.Optional(Type.String()),
      mimeType: Type.Optional(Type.String()),
    }),
  ),
  extensions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const checkPaymentPayload = Compile(PaymentPayloadSchema);

export type ExactPaymentPayload = Static<typeof PaymentPayloadSchema>;

/** Decodes and validates a `PAYMENT-SIGNATURE` header; BadRequestError (400) saying what is wrong. */
export function decodePaymentSignature(header: string): ExactPaymentPayload {
  let decoded: unknown;
  try {
    decoded = decodePaymentSignatureHeader(header.trim());
  } catch {
    throw new BadRequestError(
      "The PAYMENT-SIGNATURE header is not standard base64 of a JSON payment payload: send the payload your x402 client created, unchanged.",
    );
  }
  if (typeof decoded === "object" && decoded !== null && "x402Version" in decoded && decoded.x402Version !== 2) {
    throw new BadRequestError(
      `The PAYMENT-SIGNATURE header has x402Version ${JSON.stringify(decoded.x402Version)}; this server accepts x402 version 2 only: use an x402 V2 client.`,
    );
  }
  if (!checkPaymentPayload.Check(decoded)) {
    const problems = checkPaymentPayload
      .Errors(decoded)
      .slice(0, 3)
      .map((error) => `${error.instancePath || "(payload)"} ${error.message}`);
    throw new BadRequestError(
      `The PAYMENT-SIGNATURE header is not a well-formed x402 V2 exact EVM payment payload (${problems.join("; ")}): sign one of the offers of the 402 response with an x402 client.`,
    );
  }
  return decoded;
}

/** One payment is (network, asset, from, nonce): the EIP-3009 nonce is unique per token and payer. */
export function paymentKey(payload: ExactPaymentPayload): string {
  const { network, asset } = payload.accepted;
  const { from, nonce } = payload.payload.authorization;
  return [network, asset, from, nonce].join("|").toLowerCase();
}
