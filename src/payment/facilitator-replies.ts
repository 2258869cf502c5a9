/**
 * Reading a facilitator's replies (ARCHITECTURE.md §6 steps 5–6). Facilitators differ in small ways,
 * and the one rule that matters is: a settle reply that says `success: true` is a settlement —
 * the money has moved — so it is normalised and delivered, never turned into a 500.
 *
 * What real facilitators send (read in their source):
 * - x402 spec v2 (coinbase/x402 specs/x402-specification-v2.md §5.3, §7.2): SettleResponse is
 *   `{success, errorReason?, payer?, transaction, network, amount?, extensions?}`; `payer` is
 *   optional and `transaction` is "" on failure. VerifyResponse is `{isValid, invalidReason?, payer?}`.
 * - x402 TypeScript client (typescript/packages/core/src/http/httpFacilitatorClient.ts) accepts
 *   `null` for every optional field (`.nullish()`), and a 4xx body with `isValid`/`success` as a
 *   refusal (VerifyError/SettleError).
 * - x402 Python SDK: `FacilitatorWeb3Signer.write_contract` returns `tx_hash.hex()`
 *   (python/x402/mechanisms/evm/signers.py), which with hexbytes ≥ 1 has no `0x`; its facilitator
 *   serialises with `exclude_none=True` (examples/python/facilitator/basic/main.py), so an
 *   absent payer is a missing key.
 * - x402 Go facilitator (e2e/facilitators/go/main.go) answers an aborted settlement with 200,
 *   `success:false` and `network: ""`; `payer` and `errorReason` are `omitempty`
 *   (go/types.go SettleResponse).
 * - x402-rs (crates/x402-facilitator-local/src/handlers.rs) answers a refused payment with 400
 *   (412 for an allowance problem) and `{isValid:false, invalidReason, invalidReasonDetails,
 *   payer:""}` or `{success:false, network:"", transaction:"", errorReason, errorMessage,
 *   payer:""}`; an on-chain failure (`OnchainFailure`: transport error, pending transaction,
 *   revert) is 500 with the same `success:false` body — the transaction may be on chain, so
 *   that stays an unknown outcome (500, the attempt kept unconfirmed), not a refusal. Its
 *   scheme-level `success:false` (crates/x402-types/src/proto/v1.rs `SettleResponseWire`, not
 *   renamed to camelCase) spells the reason `error_reason`.
 *
 * Whatever the facilitator says about the network and the payer, an EIP-3009 authorization can
 * only move tokens from `authorization.from` on the chain its EIP-712 domain names (the
 * requirement's network): those are the receipt's `payer` and `network`.
 */
import { getAddress } from "viem";

export type VerifyResult =
  | { isValid: true; payer: string }
  | { isValid: false; invalidReason: string; invalidMessage?: string; payer?: string };

export type SettleResult =
  | { success: true; transaction: string; network: string; payer: string }
  | { success: false; errorReason: string; errorMessage?: string; transaction?: string; network: string; payer?: string };

export interface SupportedKind {
  x402Version: number;
  scheme: string;
  network: string;
  extra?: Record<string, unknown>;
}

/** `GET /supported` (x402 spec v2 §7.3). */
export interface SupportedResult {
  kinds: SupportedKind[];
  extensions: string[];
  signers: Record<string, string[]>;
}

/** What the payment itself says, which the receipt reports whatever the facilitator wrote. */
export interface PaymentFacts {
  /** The requirement's network (CAIP-2). */
  network: string;
  /** `authorization.from` of the EIP-3009 payload. */
  from: string;
}

/** Reason codes used when a refusal names none (the x402 codes for "no specific reason"). */
export const UNSPECIFIED_VERIFY_REASON = "unexpected_verify_error";
export const UNSPECIFIED_SETTLE_REASON = "unexpected_settle_error";

const MAX_REASON = 100;
const MAX_MESSAGE = 500;
const MAX_TRANSACTION = 128;
const TX_HASH = /^(?:0[xX])?([0-9a-fA-F]{64})$/;

/**
 * A transaction reference as the receipt and the ledger hold it: an EVM hash (64 hex digits,
 * with or without `0x`, any case) becomes `0x` + lower case; any other non-empty form (another
 * chain's signature, a facilitator's own id) is kept without whitespace or control characters
 * and cut to 128 characters; anything else is "".
 */
export function normaliseTransaction(value: unknown): string {
  if (typeof value !== "string") return "";
  const text = value.trim();
  const hash = TX_HASH.exec(text);
  if (hash) return `0x${hash[1]!.toLowerCase()}`;
  return text.replace(/[^\x21-\x7e]/g, "").slice(0, MAX_TRANSACTION);
}

/** Free text from the facilitator: one printable line, bounded; undefined when empty or not text. */
export function boundedText(value: unknown, max: number): string | undefined {
  if (typeof value !== "string") return undefined;
  const line = value.replace(/[^\x20-\x7e]+/g, " ").replace(/ {2,}/g, " ").trim();
  if (line === "") return undefined;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function firstText(body: Record<string, unknown>, keys: string[], max: number): string | undefined {
  for (const key of keys) {
    const text = boundedText(body[key], max);
    if (text !== undefined) return text;
  }
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function payerOf(facts: PaymentFacts): string {
  try {
    return getAddress(facts.from);
  } catch {
    return facts.from;
  }
}

/** A refusal's payer only as the facilitator named it: an unverified signature proves no payer. */
function namedPayer(body: Record<string, unknown>): { payer?: string } {
  const payer = boundedText(body.payer, 100);
  return payer === undefined ? {} : { payer };
}

/**
 * A `/verify` reply, or undefined when it cannot be read as an answer (then the caller reports a
 * facilitator failure). 2xx and 4xx may carry a refusal; `isValid: true` with an error status is
 * contradictory and unreadable. 5xx never reaches this function.
 */
export function readVerifyReply(status: number, body: unknown, facts: PaymentFacts): VerifyResult | undefined {
  if (!isObject(body) || typeof body.isValid !== "boolean") return undefined;
  if (body.isValid) return status < 300 ? { isValid: true, payer: payerOf(facts) } : undefined;
  const invalidMessage = firstText(body, ["invalidMessage", "invalidReasonDetails", "invalid_message", "errorMessage"], MAX_MESSAGE);
  return {
    isValid: false,
    invalidReason: firstText(body, ["invalidReason", "invalid_reason"], MAX_REASON) ?? UNSPECIFIED_VERIFY_REASON,
    ...(invalidMessage === undefined ? {} : { invalidMessage }),
    ...namedPayer(body),
  };
}

/**
 * A `/settle` reply, or undefined when it establishes neither a settlement nor a refusal (then
 * the caller reports a facilitator failure and the attempt stays unconfirmed: the outcome is
 * unknown). `success: true` is a settlement whatever the HTTP status; `success: false` is a
 * refusal with 2xx or 4xx and an unknown outcome with 5xx (x402-rs `OnchainFailure`).
 */
export function readSettleReply(status: number, body: unknown, facts: PaymentFacts): SettleResult | undefined {
  if (!isObject(body) || typeof body.success !== "boolean") return undefined;
  if (body.success) {
    return { success: true, transaction: normaliseTransaction(body.transaction), network: facts.network, payer: payerOf(facts) };
  }
  if (status >= 500) return undefined;
  const errorMessage = firstText(body, ["errorMessage", "error_message"], MAX_MESSAGE);
  const transaction = normaliseTransaction(body.transaction);
  return {
    success: false,
    errorReason: firstText(body, ["errorReason", "error_reason"], MAX_REASON) ?? UNSPECIFIED_SETTLE_REASON,
    ...(errorMessage === undefined ? {} : { errorMessage }),
    ...(transaction === "" ? {} : { transaction }),
    network: facts.network,
    ...namedPayer(body),
  };
}

/** A `/supported` reply (2xx only), or undefined when it is not one. */
export function readSupportedReply(body: unknown): SupportedResult | undefined {
  if (!isObject(body) || !Array.isArray(body.kinds)) return undefined;
  const kinds: SupportedKind[] = [];
  for (const kind of body.kinds) {
    if (!isObject(kind) || typeof kind.x402Version !== "number" || typeof kind.scheme !== "string" || typeof kind.network !== "string") {
      return undefined;
    }
    kinds.push({
      x402Version: kind.x402Version,
      scheme: kind.scheme,
      network: kind.network,
      ...(isObject(kind.extra) ? { extra: kind.extra } : {}),
    });
  }
  const extensions = Array.isArray(body.extensions) ? body.extensions.filter((item): item is string => typeof item === "string") : [];
  const signers: Record<string, string[]> = {};
  if (isObject(body.signers)) {
    for (const [family, list] of Object.entries(body.signers)) {
      if (Array.isArray(list)) signers[family] = list.filter((item): item is string => typeof item === "string");
    }
  }
  return { kinds, extensions, signers };
}
