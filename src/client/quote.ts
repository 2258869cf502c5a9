/**
 * Judging a 402 from what the buyer knows: which offer, what to print, and whether to sign, ask or
 * decline. Pure: the tokens' verifications and the server's claims are gathered beforehand
 * (payer.ts). Every amount printed or compared is in verified decimals; the server's claims only
 * ever add warnings.
 */
import type { PaymentRequired } from "@x402/core/types";
import { chooseOffer, type Budget, type Offer } from "./offers.ts";
import { quotedRows } from "./payment-required.ts";
import type { SellerClaim } from "./seller-claims.ts";
import { suspiciousNotes } from "./token-notes.ts";
import type { Verification } from "./token-verification.ts";
import { formatPrice, tokenKey } from "./tokens.ts";

export interface Knowledge {
  /** By tokenKey, for the offers' tokens that are not built in. */
  verified: ReadonlyMap<string, Verification>;
  /** What the server says about its tokens, by tokenKey (warnings only). */
  claims: ReadonlyMap<string, SellerClaim>;
}

export interface QuotePolicy {
  /** Allowed networks in order of preference; empty means any. */
  networks: readonly string[];
  budget: Budget | null;
  yes: boolean;
}

export type Verdict =
  /** Within the budget, or `--yes` without one: sign the offer shown. */
  | { action: "sign"; lines: string[]; offer: Offer }
  /** No budget and no `--yes`: a person must say yes to `question`. */
  | { action: "confirm"; lines: string[]; offer: Offer; question: string }
  /** Nothing is signed; `message` says why and what to change. */
  | { action: "decline"; lines: string[]; message: string };

const NOTHING_PAID = "nothing was paid";

export function judgeQuote(required: PaymentRequired, knowledge: Knowledge, offers: readonly Offer[], policy: QuotePolicy): Verdict {
  const choice = chooseOffer(offers, { networks: policy.networks, budget: policy.budget });
  switch (choice.kind) {
    case "unsupported":
      return decline([], `the server offers only ${choice.offered.join(", ")}; this client pays 'exact' offers on eip155 networks; ${NOTHING_PAID}`);
    case "no-allowed-network":
      return decline([], `no offer on --network ${policy.networks.join(",")}: the server offers ${choice.offered.join(", ")}; ${NOTHING_PAID}`);
    case "over-budget": {
      const price = formatPrice(choice.cheapest.amount, choice.cheapest.token);
      const budget = policy.budget?.text ?? "";
      return decline(quoteLines(required, choice.cheapest, knowledge), `over budget: the quote of ${price} is more than --max-amount ${budget}; ${NOTHING_PAID}`);
    }
    case "unverified": {
      const { cheapest } = choice;
      const verification = knowledge.verified.get(tokenKey(cheapest.requirement.network, cheapest.requirement.asset));
      const reason = verification !== undefined && !verification.ok ? verification.reason : "the token's decimals are unverified";
      const price = formatPrice(cheapest.amount, cheapest.token);
      return decline(
        quoteLines(required, cheapest, knowledge),
        `not paid: the quote of ${price} cannot be checked against --max-amount ${policy.budget?.text ?? ""}: ${reason}; ${NOTHING_PAID}`,
      );
    }
    case "chosen":
      break;
  }
  const { offer } = choice;
  const lines = quoteLines(required, offer, knowledge);
  if (policy.budget !== null || policy.yes) return { action: "sign", lines, offer };
  return { action: "confirm", lines, offer, question: `Pay ${formatPrice(offer.amount, offer.token)} to ${offer.requirement.payTo}? [y/N] ` };
}

function decline(lines: string[], message: string): Verdict {
  return { action: "decline", lines, message };
}

/** The quote line, then a warning line for each suspicious thing about its token. */
export function quoteLines(required: PaymentRequired, offer: Offer, knowledge: Knowledge): string[] {
  const { network, asset } = offer.requirement;
  const key = tokenKey(network, asset);
  const notes = suspiciousNotes({ network, address: asset }, knowledge.verified.get(key), knowledge.claims.get(key));
  return [describeQuote(required, offer), ...notes.map((note) => `Warning: suspicious: ${note}`)];
}

/**
 * "Quote: 0.0024 USDC on Base Sepolia for 24 rows, to 0x… (2400 smallest units of 0x… on
 * eip155:84532)": amount, token, network, recipient and row count, all checkable.
 */
export function describeQuote(required: PaymentRequired, offer: Offer): string {
  const rows = quotedRows(required);
  const forRows = rows === null ? "" : ` for ${rows} row${rows === 1 ? "" : "s"}`;
  const { requirement } = offer;
  const exact = offer.token.decimals === null ? `${offer.amount} smallest units` : `${offer.amount} smallest units of ${requirement.asset} on ${requirement.network}`;
  return `Quote: ${formatPrice(offer.amount, offer.token)}${forRows}, to ${requirement.payTo} (${exact})`;
}
