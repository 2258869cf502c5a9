/**
 * What the chain says of a payer before any facilitator call or ledger write (ARCHITECTURE.md §6
 * step 4; DESIGN.md §17 "Unpaid answers are bounded per client"): a payment that can never be
 * verified costs no /verify and no fsync. Two reads, sent at once through the `rpc_urls` endpoint
 * (chain.ts `payerState`), so at most one round trip:
 * - the token's `balanceOf(from)`: below the offer's amount, the payment cannot settle;
 * - for a signature that is not 65 bytes and does not deploy its wallet (local-checks.ts
 *   `deploysSmartWallet`), the code at `from`: without a contract there, no facilitator accepts it.
 *
 * The facilitator still decides everything else, and decides alone when the chain cannot be read:
 * no endpoint for the chain, or one that fails or takes longer than PAYER_READ_MS (fail open, as
 * before these reads existed). After such a failure the chain is not asked again for
 * PAYER_CACHE_MS, so an endpoint that hangs delays one payment in that time, not every one.
 *
 * A payer found funded is remembered for PAYER_CACHE_MS, with its balance less what each payment
 * admitted since then takes from it: a buyer paying repeatedly costs one read per PAYER_CACHE_MS,
 * and a remembered balance admits no more payments than it can pay. A refusal is never remembered
 * (a wallet funded a moment later pays at once), and a payment the facilitator refuses, or does not
 * settle, makes its payer read again: a payer emptied since it was read reaches /verify once (or,
 * with payments in flight at once, as many times as the balance read could pay), then is refused
 * here. Each read has taken a place in the client's refused-payment budget (core.ts).
 */
import { formatAmount } from "../config/amounts.ts";
import type { ChainReader } from "./chain.ts";
import { deploysSmartWallet, signatureCheckedLocally } from "./local-checks.ts";
import { PAYMENT_MESSAGES as MSG } from "./messages.ts";
import type { ExactPaymentPayload } from "./payload.ts";
import type { Offer } from "./pricing.ts";

/** How long a funded payer's balance, or an endpoint's failure, is remembered. */
export const PAYER_CACHE_MS = 5_000;
/** Payers remembered at most; the oldest go first once the expired ones are gone. */
const MAX_PAYERS = 10_000;

export interface PayerRefusal {
  reason: "insufficient-balance" | "no-smart-wallet";
  /** The 402's `error`. */
  message: string;
}

export interface PayerCheck {
  /** Why the chain says this payment can never be verified, or null (it may be, or the chain cannot tell). */
  refusal(payload: ExactPaymentPayload, offer: Offer): Promise<PayerRefusal | null>;
  /** The facilitator refused a payment of this payer (or did not settle it): its next payment reads the chain. */
  forget(payload: ExactPaymentPayload, offer: Offer): void;
}

interface Known {
  readAt: number;
  /** The balance read, less the amounts of the payments admitted on it since. */
  balance: bigint;
  /** Code at the payer; null when it was not read. */
  deployed: boolean | null;
}

export function createPayerCheck(chain: ChainReader, now: () => number = Date.now): PayerCheck {
  const known = new Map<string, Known>();
  /** Networks whose endpoint failed, until when they are not asked. */
  const silent = new Map<string, number>();
  const keyOf = (payload: ExactPaymentPayload, offer: Offer) =>
    `${offer.requirement.network}|${offer.requirement.asset}|${payload.payload.authorization.from}`.toLowerCase();

  function remember(key: string, entry: Known): void {
    known.delete(key); // re-inserted last: the map's order is the order of reads
    if (known.size >= MAX_PAYERS) {
      for (const [other, { readAt }] of known) if (entry.readAt - readAt >= PAYER_CACHE_MS) known.delete(other);
      if (known.size >= MAX_PAYERS) known.delete(known.keys().next().value!);
    }
    known.set(key, entry);
  }

  return {
    async refusal(payload, offer) {
      const { from } = payload.payload.authorization;
      const { network, asset } = offer.requirement;
      const needsCode = !signatureCheckedLocally(payload) && !deploysSmartWallet(payload);
      const key = keyOf(payload, offer);
      const time = now();
      const cached = known.get(key);
      const fresh = cached !== undefined && time - cached.readAt < PAYER_CACHE_MS ? cached : undefined;
      if (fresh !== undefined && fresh.balance >= offer.amount && (!needsCode || fresh.deployed === true)) {
        fresh.balance -= offer.amount;
        return null;
      }
      if ((silent.get(network) ?? 0) > time) return null;
      const state = await chain.payerState({ network, asset, from, code: needsCode });
      if (state === null) {
        silent.set(network, now() + PAYER_CACHE_MS);
        return null;
      }
      silent.delete(network);
      if (state.deployed === false) return { reason: "no-smart-wallet", message: MSG.notSmartWallet(from) };
      if (state.balance < offer.amount) {
        const token = offer.tag.token;
        const units = (amount: bigint) => `${formatAmount(amount, token.decimals)} ${token.symbol}`;
        return { reason: "insufficient-balance", message: MSG.insufficientBalance(from, units(state.balance), units(offer.amount)) };
      }
      remember(key, { readAt: now(), balance: state.balance - offer.amount, deployed: state.deployed ?? fresh?.deployed ?? null });
      return null;
    },
    forget(payload, offer) {
      known.delete(keyOf(payload, offer));
    },
  };
}
