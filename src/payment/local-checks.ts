/**
 * Checks a payment payload against the offer it claims to accept, before any database or
 * facilitator work (ARCHITECTURE.md §6 step 4): a payment that can never settle must cost the server no
 * more than a quote. Everything here is local and cheap: the authorization's recipient, amount and
 * time window, and the EIP-712 signature (signature.ts). The facilitator makes the same
 * checks (and the on-chain ones: balance, nonce) again at /verify; the payer's balance, and a smart
 * wallet's contract, are read before that (payer-check.ts).
 */
import { isAddressEqual, isErc6492Signature, parseErc6492Signature, zeroAddress, type Hex } from "viem";
import { chainIdOf } from "./chain.ts";
import type { Offer } from "./pricing.ts";
import { recoverAuthorizationSigner, UnsignableError } from "./signature.ts";
import type { ExactPaymentPayload } from "./wire.ts";

/**
 * Seconds a payer's clock may run ahead of ours. x402 clients sign `validBefore = now +
 * maxTimeoutSeconds`, so an authorization living longer than that (plus this allowance) was not
 * made for this offer: the buyer does not choose how long a payment lives (§6 "Replay and races").
 */
export const CLOCK_ALLOWANCE_SECONDS = 60;

/**
 * The facilitator refuses an authorization that expires within 6 seconds (x402 `exact` EVM:
 * `validBefore < now + 6` is `invalid_exact_evm_payload_authorization_valid_before`); so do we.
 */
const SETTLEMENT_MARGIN_SECONDS = 6n;

/** An ECDSA signature is 65 bytes; longer ones are ERC-1271 / ERC-6492 smart-wallet signatures. */
const ECDSA_SIGNATURE_HEX_LENGTH = 2 + 65 * 2;

/** Whether the payload's signature is an ECDSA one, whose signer `authorizationProblem` recovers. */
export function signatureCheckedLocally(payload: ExactPaymentPayload): boolean {
  return payload.payload.signature.length === ECDSA_SIGNATURE_HEX_LENGTH;
}

/**
 * Whether the signature is ERC-6492-wrapped with what deploys the wallet: a factory other than the
 * zero address, and its calldata. x402's exact EVM facilitator (@x402/evm `verifyEIP3009`, its
 * `classifyErc6492Payer`) checks every other signature by ecrecover when no contract is deployed at
 * `from` (so one that is not 65 bytes never passes) and by ERC-1271 when one is; a wrapped one from
 * an address without code is a wallet it may deploy. So a signature that is neither 65 bytes nor
 * wrapped so can only be verified if `from` has code, which payer-check.ts reads.
 */
export function deploysSmartWallet(payload: ExactPaymentPayload): boolean {
  const signature = payload.payload.signature.toLowerCase() as Hex;
  if (!isErc6492Signature(signature)) return false;
  try {
    const { address, data } = parseErc6492Signature(signature);
    return address !== undefined && data !== undefined && !isAddressEqual(address, zeroAddress);
  } catch {
    return false;
  }
}

/** Whether the authorization lives longer than an offer allows (checked before anything else). */
export function livesTooLong(payload: ExactPaymentPayload, maxTimeoutSeconds: number, nowSeconds: bigint): boolean {
  const horizon = nowSeconds + BigInt(maxTimeoutSeconds + CLOCK_ALLOWANCE_SECONDS);
  return BigInt(payload.payload.authorization.validBefore) > horizon;
}

/**
 * The first reason the payload cannot pay `offer`, or null. The signature is recovered only for
 * ECDSA signatures: a smart wallet's signature can only be checked on chain, which the
 * facilitator does at /verify.
 */
export async function authorizationProblem(payload: ExactPaymentPayload, offer: Offer, nowSeconds: bigint): Promise<string | null> {
  const { from, to, value, validAfter, validBefore } = payload.payload.authorization;
  const requirement = offer.requirement;
  if (to.toLowerCase() !== requirement.payTo.toLowerCase()) return `the authorization pays ${to}, not the offer's payTo ${requirement.payTo}`;
  if (BigInt(value) !== offer.amount) return `the authorization is for ${value} units, not the offer's ${offer.amount}`;
  if (BigInt(validAfter) > nowSeconds) return "the authorization is not valid yet (validAfter is in the future)";
  if (BigInt(validBefore) < nowSeconds + SETTLEMENT_MARGIN_SECONDS) return "the authorization has expired (validBefore has passed)";
  if (!signatureCheckedLocally(payload)) return null;
  let signer: string | null;
  try {
    const domain = {
      name: String(requirement.extra.name),
      version: String(requirement.extra.version),
      chainId: BigInt(chainIdOf(requirement.network)),
      verifyingContract: requirement.asset,
    };
    signer = await recoverAuthorizationSigner(domain, payload.payload.authorization, payload.payload.signature);
  } catch (error) {
    if (!(error instanceof UnsignableError)) throw error;
    signer = null;
  }
  if (signer === null) return "the signature is not a valid ECDSA signature";
  return signer.toLowerCase() === from.toLowerCase() ? null : "the signature was not made by the authorization's `from` for this offer";
}
