/**
 * The decision behind a 402: verify the offers' tokens (built in, the buyer's `--token-decimals`,
 * or the contract through the buyer's `--rpc`), gather the server's claims about them for
 * warnings, judge the quote (quote.ts), then pay only with consent — within `--max-amount`, or
 * `--yes`, or a "yes" typed at the terminal; never by default when nobody can be asked. The key is
 * read only when a payment is actually signed, so free queries and declined quotes need none.
 */
import type { PaymentRequired } from "@x402/core/types";
import { failure } from "./failure.ts";
import { offersOf, type Budget } from "./offers.ts";
import type { Decision } from "./paid-query.ts";
import { judgeQuote } from "./quote.ts";
import { fetchSellerClaims } from "./seller-claims.ts";
import { readSigningKey, signPayment } from "./signer.ts";
import { verifyTokens, type TokenRef, type TokenSources } from "./token-verification.ts";

export interface PayerOptions {
  base: string;
  networks: readonly string[];
  budget: Budget | null;
  yes: boolean;
  /** How tokens that are not built in are verified. */
  sources: TokenSources;
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
    const tokens = payableTokens(required, options.networks);
    const [verified, claims] = await Promise.all([verifyTokens(tokens, options.sources), fetchSellerClaims(options.base, tokens)]);
    const verdict = judgeQuote(required, { verified, claims }, offersOf(required, verified), options);
    for (const line of verdict.lines) options.tell(line);
    if (verdict.action === "decline") return decline(verdict.message);
    if (verdict.action === "confirm") {
      if (!options.interactive) {
        return decline("payment needs consent and there is no terminal to ask: pass --max-amount AMOUNT (or --yes); nothing was paid");
      }
      if (!(await options.ask(verdict.question))) return decline("payment declined; nothing was paid");
    }
    const { offer } = verdict;
    const key = readSigningKey(options.env, options.keyEnv);
    if (!key.ok) return { pay: false, failure: failure("usage", key.reason) };
    const signed = await signPayment(required, offer.requirement, key.key);
    if (!signed.ok) return { pay: false, failure: failure("runtime", signed.reason) };
    return { pay: true, offer, header: signed.header };
  };
}

/** Tokens of the offers this client could sign on the allowed networks: the only ones worth verifying. */
function payableTokens(required: PaymentRequired, networks: readonly string[]): TokenRef[] {
  return required.accepts
    .filter((offer) => offer.scheme === "exact" && offer.network.startsWith("eip155:"))
    .filter((offer) => networks.length === 0 || networks.includes(offer.network))
    .map((offer) => ({ network: offer.network, address: offer.asset }));
}

function decline(message: string): Decision {
  return { pay: false, failure: failure("declined", message) };
}
