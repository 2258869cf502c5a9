/**
 * The decision behind a 402: show the quote, choose the offer (offers.ts), then pay only with
 * consent — within `--max-amount`, or `--yes`, or a "yes" typed at the terminal; never by default
 * when nobody can be asked. The key is read only when a payment is actually signed, so free
 * queries and declined quotes need none.
 */
import type { PaymentRequired } from "@x402/core/types";
import { failure } from "./failure.ts";
import { chooseOffer, offersOf, type Budget, type Offer } from "./offers.ts";
import type { Decision } from "./paid-query.ts";
import { quotedRows } from "./payment-required.ts";
import { readSigningKey, signPayment } from "./signer.ts";
import { lookupTokenDecimals } from "./token-decimals.ts";
import { formatPrice } from "./tokens.ts";

export interface PayerOptions {
  base: string;
  networks: readonly string[];
  budget: Budget | null;
  yes: boolean;
  /** Whether a person can answer a question (stdin is a terminal). */
  interactive: boolean;
  ask(question: string): Promise<boolean>;
  /** One line for the user (stderr). */
  tell(line: string): void;
  env: Record<string, string | undefined>;
  keyEnv: string;
}

export function createPayer(options: PayerOptions): (required: PaymentRequired) => Promise<Decision> {
  return async (required) => {
    let offers = offersOf(required);
    if (offers.some((offer) => offer.token.decimals === null)) {
      offers = offersOf(required, await lookupTokenDecimals(options.base, offers));
    }
    const choice = chooseOffer(offers, { networks: options.networks, budget: options.budget });
    const nothingPaid = "nothing was paid";
    switch (choice.kind) {
      case "unsupported":
        return decline(`the server offers only ${choice.offered.join(", ")}; this client pays 'exact' offers on eip155 networks; ${nothingPaid}`);
      case "no-allowed-network":
        return decline(`no offer on --network ${options.networks.join(",")}: the server offers ${choice.offered.join(", ")}; ${nothingPaid}`);
      case "over-budget":
        options.tell(describeQuote(required, choice.cheapest));
        return decline(`over budget: the quote of ${formatPrice(choice.cheapest.amount, choice.cheapest.token)} ${choice.reason}; ${nothingPaid}`);
      case "chosen":
        break;
    }
    const offer = choice.offer;
    options.tell(describeQuote(required, offer));
    if (options.budget === null && !options.yes) {
      if (!options.interactive) {
        return decline(`payment needs consent and there is no terminal to ask: pass --max-amount AMOUNT (or --yes); ${nothingPaid}`);
      }
      if (!(await options.ask(`Pay ${formatPrice(offer.amount, offer.token)} to ${offer.requirement.payTo}? [y/N] `))) {
        return decline(`payment declined; ${nothingPaid}`);
      }
    }
    const key = readSigningKey(options.env, options.keyEnv);
    if (!key.ok) return { pay: false, failure: failure("usage", key.reason) };
    const signed = await signPayment(required, offer.requirement, key.key);
    if (!signed.ok) return { pay: false, failure: failure("runtime", signed.reason) };
    return { pay: true, offer, header: signed.header };
  };
}

function decline(message: string): Decision {
  return { pay: false, failure: failure("declined", message) };
}

/**
 * "Quote: 0.0024 USDC on Base Sepolia for 24 rows, to 0x… (2400 smallest units of 0x… on
 * eip155:84532)": amount, token, network, recipient and row count, all checkable.
 */
export function describeQuote(required: PaymentRequired, offer: Offer): string {
  const rows = quotedRows(required);
  const forRows = rows === null ? "" : ` for ${rows} row${rows === 1 ? "" : "s"}`;
  const { requirement } = offer;
  const exact = offer.token.symbol === null ? `${offer.amount} smallest units` : `${offer.amount} smallest units of ${requirement.asset} on ${requirement.network}`;
  return `Quote: ${formatPrice(offer.amount, offer.token)}${forRows}, to ${requirement.payTo} (${exact})`;
}
