/**
 * Choosing what to pay (x402 V2: the client picks one entry of `accepts`). Only `exact` offers on
 * EVM networks can be signed. Among those on the networks the key may pay on, the cheapest wins —
 * compared by value across tokens when decimals are known — then the earlier `--network`, then
 * the server's order (which is cheapest first, ARCHITECTURE.md §6). The budget (`--max-amount`, decimal
 * token units) is compared exactly, in each offer's own token, with verified decimals only: an
 * offer whose token is not verified is never paid under a budget (tokens.ts).
 */
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import type { Verification } from "./token-verification.ts";
import { tokenKey, tokenView, type TokenView } from "./tokens.ts";

export interface Offer {
  requirement: PaymentRequirements;
  token: TokenView;
  /** Smallest units. */
  amount: bigint;
  /** Position in the server's `accepts`. */
  position: number;
}

/** A decimal budget as an exact fraction: `units / 10^scale` token units. */
export interface Budget {
  text: string;
  units: bigint;
  scale: number;
}

export interface OfferPolicy {
  /** Allowed networks in order of preference; empty means any. */
  networks: readonly string[];
  /** null: no limit here (the user confirms, or said --yes). */
  budget: Budget | null;
}

export type OfferChoice =
  | { kind: "chosen"; offer: Offer }
  | { kind: "unsupported"; offered: string[] }
  | { kind: "no-allowed-network"; offered: string[] }
  | { kind: "over-budget"; cheapest: Offer }
  /** The cheapest offer's token is not verified, so it cannot be compared with the budget. */
  | { kind: "unverified"; cheapest: Offer };

export function parseBudget(text: string): Budget | null {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (match === null) return null;
  const fraction = match[2] ?? "";
  return { text: text.trim(), units: BigInt((match[1] ?? "") + fraction), scale: fraction.length };
}

/** The offers of a 402, with their tokens as verified (token-verification.ts); others stay unknown. */
export function offersOf(required: PaymentRequired, verified: ReadonlyMap<string, Verification> = new Map()): Offer[] {
  return required.accepts.map((requirement, position) => {
    const verification = verified.get(tokenKey(requirement.network, requirement.asset));
    return {
      requirement,
      token: tokenView(requirement.network, requirement.asset, verification?.ok ? verification.token : null),
      amount: BigInt(requirement.amount),
      position,
    };
  });
}

export function chooseOffer(offers: readonly Offer[], policy: OfferPolicy): OfferChoice {
  const signable = offers.filter((offer) => offer.requirement.scheme === "exact" && offer.requirement.network.startsWith("eip155:"));
  if (signable.length === 0) return { kind: "unsupported", offered: describeOffered(offers) };
  const allowed = policy.networks.length === 0 ? signable : signable.filter((offer) => policy.networks.includes(offer.requirement.network));
  if (allowed.length === 0) return { kind: "no-allowed-network", offered: describeOffered(signable) };
  const ranked = [...allowed].sort((a, b) => compareOffers(a, b, policy.networks));
  const cheapest = ranked[0]!;
  const budget = policy.budget;
  if (budget === null) return { kind: "chosen", offer: cheapest };
  const affordable = ranked.find((offer) => withinBudget(offer, budget) === true);
  if (affordable !== undefined) return { kind: "chosen", offer: affordable };
  return withinBudget(cheapest, budget) === null ? { kind: "unverified", cheapest } : { kind: "over-budget", cheapest };
}

/** true/false, or null when the token's decimals are not verified (then it is never paid under a budget). */
export function withinBudget(offer: Offer, budget: Budget): boolean | null {
  const decimals = offer.token.decimals;
  if (decimals === null) return null;
  // amount / 10^decimals <= units / 10^scale, cross-multiplied to stay in integers.
  return offer.amount * 10n ** BigInt(budget.scale) <= budget.units * 10n ** BigInt(decimals);
}

function compareOffers(a: Offer, b: Offer, preference: readonly string[]): number {
  const byValue = compareValue(a, b);
  if (byValue !== 0) return byValue;
  const byNetwork = preferenceRank(a, preference) - preferenceRank(b, preference);
  return byNetwork !== 0 ? byNetwork : a.position - b.position;
}

/** Same token: by amount. Different tokens: by value when both decimals are known; else equal. */
function compareValue(a: Offer, b: Offer): number {
  const sameToken = tokenKey(a.token.network, a.token.address) === tokenKey(b.token.network, b.token.address);
  if (sameToken) return sign(a.amount - b.amount);
  if (a.token.decimals === null || b.token.decimals === null) return 0;
  return sign(a.amount * 10n ** BigInt(b.token.decimals) - b.amount * 10n ** BigInt(a.token.decimals));
}

function preferenceRank(offer: Offer, preference: readonly string[]): number {
  const index = preference.indexOf(offer.requirement.network);
  return index === -1 ? preference.length : index;
}

function sign(value: bigint): number {
  return value < 0n ? -1 : value > 0n ? 1 : 0;
}

function describeOffered(offers: readonly Offer[]): string[] {
  return [...new Set(offers.map((offer) => `${offer.requirement.scheme} on ${offer.requirement.network}`))];
}
