/**
 * The x402 V2 payment payload, whatever carried it (ARCHITECTURE.md §6, §8): the HTTP binding decodes it
 * from PAYMENT-SIGNATURE, the MCP binding takes it from `_meta["x402/payment"]`. A value that is not
 * a well-formed `exact` EVM payload is the client's mistake (400), found before any facilitator
 * call: the facilitator only ever sees well-formed payloads. Messages name `source`, the place the
 * payload came from, so each transport's user reads where to look.
 */
import Type, { type Static } from "typebox";
import { Compile } from "typebox/compile";
import { BadRequestError } from "../errors.ts";

const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" });
/** uint256 in decimal: at most 78 digits. */
const Uint = Type.String({ pattern: "^[0-9]{1,78}$" });
/** 65-byte ECDSA signatures, and longer ERC-1271 / ERC-6492 ones: whole bytes of hex. */
const HexBytes = Type.String({ pattern: "^0x([0-9a-fA-F]{2})+$", maxLength: 8192 });
const Bytes32 = Type.String({ pattern: "^0x[0-9a-fA-F]{64}$" });

const RequirementSchema = Type.Object({
  scheme: Type.String(),
  network: Type.Unsafe<`eip155:${string}`>(Type.String({ pattern: "^eip155:[0-9]{1,20}$" })),
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

/** Validates a decoded payment payload; BadRequestError (400) saying what is wrong and where. */
export function parsePaymentPayload(decoded: unknown, source: string): ExactPaymentPayload {
  if (typeof decoded === "object" && decoded !== null && "x402Version" in decoded && decoded.x402Version !== 2) {
    throw new BadRequestError(
      `The ${source} has x402Version ${JSON.stringify(decoded.x402Version)}; this server accepts x402 version 2 only: use an x402 V2 client.`,
    );
  }
  if (!checkPaymentPayload.Check(decoded)) {
    const problems = checkPaymentPayload
      .Errors(decoded)
      .slice(0, 3)
      .map((error) => `${error.instancePath || "(payload)"} ${error.message}`);
    throw new BadRequestError(
      `The ${source} is not a well-formed x402 V2 exact EVM payment payload (${problems.join("; ")}): sign one of the offers of the 402 response with an x402 client.`,
    );
  }
  paymentIdOf(decoded, source);
  return decoded;
}

/** One payment is (network, asset, from, nonce): the EIP-3009 nonce is unique per token and payer. */
export function paymentKey(payload: ExactPaymentPayload): string {
  const { network, asset } = payload.accepted;
  const { from, nonce } = payload.payload.authorization;
  return [network, asset, from, nonce].join("|").toLowerCase();
}

/** The `payment-identifier` extension's key in `extensions` (x402 `specs/extensions/payment_identifier.md`). */
export const PAYMENT_IDENTIFIER = "payment-identifier";

/** "16-128 characters: alphanumeric, hyphens, underscores" (payment_identifier.md, `id` Format). */
const PAYMENT_ID = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The idempotency id the client chose, or null when it sent none. A malformed id is a 400: the
 * client asked for idempotency and would silently not get it.
 */
export function paymentIdOf(payload: Pick<ExactPaymentPayload, "extensions">, source = "payment payload"): string | null {
  const extension = payload.extensions?.[PAYMENT_IDENTIFIER] as { info?: { id?: unknown } } | undefined;
  const id = extension?.info?.id;
  if (id === undefined || id === null) return null;
  if (typeof id !== "string" || !PAYMENT_ID.test(id)) {
    throw new BadRequestError(
      `The ${source}'s extensions.payment-identifier.info.id must be 16 to 128 letters, digits, '-' or '_' (e.g. pay_ followed by a UUID without dashes).`,
    );
  }
  return id;
}
