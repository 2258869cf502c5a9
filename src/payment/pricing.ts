/**
 * Offers (`accepts` of a 402) from a table's price tags: pure, deterministic, exact (ARCHITECTURE.md §6).
 *
 * Zero rule (extends §6 "if every applicable amount is 0 → 200 without payment"): when the
 * cheapest applicable offer costs 0 the request is served free, so an offer is never quoted at 0.
 * Both `offersForQuery` and `offersForMetadata` then return an empty list: "nothing to pay".
 */
import { getAddress } from "viem";
import type { PaymentRequirements } from "@x402/core/types";
import type { FixedPriceTag, MetadataPriceTag, PerRowPriceTag, PriceTag, TokenInfo } from "../config/types.ts";
import { BadRequestError } from "../errors.ts";
import { sameJson } from "./json-equal.ts";

export interface Offer {
  tag: PriceTag;
  /** Smallest token units; equals `requirement.amount`. */
  amount: bigint;
  /** The row count that priced a per_row offer quoted by count; null for every other offer. */
  rows: number | null;
  /** The LIMIT that priced a per_row offer quoted by LIMIT (`quote: limit`); null for every other offer. */
  upTo?: number;
  requirement: PaymentRequirements;
}

/**
 * What a query's per_row prices are computed from: the rows it returns (null: not counted yet) and
 * its LIMIT (null: none). A per_row tag quoted by count uses the first, one quoted by limit the second.
 */
export interface QuerySize {
  counted: number | null;
  limit: number | null;
}

export interface OfferOptions {
  maxTimeoutSeconds: number;
}

/**
 * The requirement for one tag and amount, keys always in the same order so that its JSON is
 * byte-for-byte the same on every request: the client's `accepted` must equal it (x402 V2 `exact`).
 */
export function requirementFor(tag: PriceTag, amount: bigint, opts: OfferOptions): PaymentRequirements {
  return {
    scheme: "exact",
    network: tag.token.network,
    amount: amount.toString(),
    asset: getAddress(tag.token.address),
    payTo: getAddress(tag.payTo),
    maxTimeoutSeconds: opts.maxTimeoutSeconds,
    extra: { name: tag.token.name, version: tag.token.version },
  };
}

/** Whether a per_row tier covers `rows` (bounds optional and inclusive). */
export function tierApplies(tag: PerRowPriceTag, rows: number): boolean {
  return (tag.minItems === undefined || rows >= tag.minItems) && (tag.maxItems === undefined || rows <= tag.maxItems);
}

/** `amount_per_item × rows`, raised to `min_total_amount`. */
export function perRowAmount(tag: PerRowPriceTag, rows: number): bigint {
  const total = tag.amountPerItem * BigInt(rows);
  return tag.minTotalAmount !== undefined && total < tag.minTotalAmount ? tag.minTotalAmount : total;
}

/**
 * Offers for a query from the table's price tags. `size.counted` null means "not counted": only
 * offers known without reading the data are returned (fixed, and per_row quoted by LIMIT), which
 * is how a fixed `accepted` is matched before any work. Throws BadRequestError when no tag applies
 * (outside every tier, or a table priced by LIMIT queried without one, or no fixed tag).
 * metadata_price tags price only an empty result (see below); per_row and fixed tags the rest.
 */
export function offersForQuery(tags: PriceTag[], size: QuerySize, opts: OfferOptions): Offer[] {
  const perRow = tags.filter((tag): tag is PerRowPriceTag => tag.type === "per_row");
  const { counted, limit } = size;
  const offers: Offer[] = [];
  for (const tag of tags) {
    if (tag.type === "fixed") offers.push(flatOffer(tag, opts));
    if (tag.type !== "per_row") continue;
    if (tag.quote === "count" && counted !== null && tierApplies(tag, counted)) {
      const amount = perRowAmount(tag, counted);
      offers.push({ tag, amount, rows: counted, requirement: requirementFor(tag, amount, opts) });
    }
    if (tag.quote === "limit" && limit !== null && tierApplies(tag, limit)) {
      const amount = perRowAmount(tag, limit);
      offers.push({ tag, amount, rows: null, upTo: limit, requirement: requirementFor(tag, amount, opts) });
    }
  }
  // An empty result still carries the table's schema: on a table whose metadata is sold, it is
  // sold at the metadata price rather than per row (ARCHITECTURE.md §6, "Zero"). LIMIT 0 is empty
  // whatever the data.
  const metadata = tags.filter((tag): tag is MetadataPriceTag => tag.type === "metadata_price");
  if ((counted === 0 || limit === 0) && metadata.length > 0 && perRow.length > 0) {
    const flat = offers.filter((offer) => offer.rows === null && offer.upTo === undefined);
    return cheapestFirst([...flat, ...metadata.map((tag) => ({ ...flatOffer(tag, opts), rows: 0 }))]);
  }
  const byCount = perRow.filter((tag) => tag.quote === "count");
  const byLimit = perRow.filter((tag) => tag.quote === "limit");
  // Refused only once every tag could be priced: a count still to come may yet find a tier.
  if (offers.length === 0 && perRow.length > 0 && (counted !== null || byCount.length === 0)) {
    if (byCount.length === 0 && limit === null) {
      throw new BadRequestError(
        `This table is priced per row by the query's LIMIT, before any data is read: add LIMIT n (e.g. LIMIT 100) and pay for up to n rows (${byLimit.map(tierBounds).join(", or ")}).`,
      );
    }
    const what = counted !== null ? `The query returns ${counted} rows` : `The query's LIMIT is ${limit}`;
    throw new BadRequestError(
      `${what}, but this table is sold only for results of ${perRow.map(tierBounds).join(", or ")}: ` +
        "change the WHERE clause or LIMIT so that the row count falls in one of these ranges.",
    );
  }
  return cheapestFirst(offers);
}

/** Offers for the metadata endpoint (metadata_price tags only). */
export function offersForMetadata(tags: PriceTag[], opts: OfferOptions): Offer[] {
  const offers = tags
    .filter((tag): tag is MetadataPriceTag => tag.type === "metadata_price")
    .map((tag) => flatOffer(tag, opts));
  return cheapestFirst(offers);
}

/** What is being paid for; `mimeType` is the Arrow stream for queries, JSON for metadata. */
export interface PaidResource {
  url: string;
  description: string;
  mimeType: string;
}

/** The x402 V2 402 body; also sent base64-encoded in `PAYMENT-REQUIRED`. */
export interface PaymentRequiredBody {
  x402Version: 2;
  error: string;
  resource: PaidResource;
  accepts: PaymentRequirements[];
  /** x402 V2 extensions the server advertises (payment/extensions.ts). */
  extensions?: Record<string, unknown>;
}

/**
 * The 402 body. For per_row offers the description ends with ` - N rows` (ARCHITECTURE.md §6), or
 * ` - up to N rows` when priced by LIMIT, so the client sees what it is paying for; `error` is a
 * sentence saying what to do next.
 */
export function paymentRequiredBody(resource: PaidResource, offers: Offer[], error: string, extensions?: Record<string, unknown>): PaymentRequiredBody {
  const rows = offers.find((offer) => offer.rows !== null)?.rows;
  const upTo = offers.find((offer) => offer.upTo !== undefined)?.upTo;
  const description =
    rows !== undefined && rows !== null
      ? `${resource.description} - ${rows} rows`
      : upTo !== undefined
        ? `${resource.description} - up to ${upTo} rows`
        : resource.description;
  return {
    x402Version: 2,
    error,
    resource: { url: resource.url, description, mimeType: resource.mimeType },
    accepts: offers.map((offer) => offer.requirement),
    ...(extensions === undefined ? {} : { extensions }),
  };
}

/** The offer whose requirement equals `accepted` in every field (x402 V2: direct equality). */
export function findOffer(offers: Offer[], accepted: unknown): Offer | undefined {
  return offers.find((offer) => sameJson(offer.requirement, accepted));
}

function flatOffer(tag: FixedPriceTag | MetadataPriceTag, opts: OfferOptions): Offer {
  return { tag, amount: tag.amount, rows: null, requirement: requirementFor(tag, tag.amount, opts) };
}

/** Sorted by value in whole token units (tokens may differ in decimals); stable, so ties keep config order. */
function cheapestFirst(offers: Offer[]): Offer[] {
  const sorted = [...offers].sort((a, b) => compareValue(a.amount, a.tag.token, b.amount, b.tag.token));
  const cheapest = sorted[0];
  return cheapest !== undefined && cheapest.amount === 0n ? [] : sorted;
}

function compareValue(a: bigint, tokenA: TokenInfo, b: bigint, tokenB: TokenInfo): number {
  const left = a * 10n ** BigInt(tokenB.decimals);
  const right = b * 10n ** BigInt(tokenA.decimals);
  return left < right ? -1 : left > right ? 1 : 0;
}

function tierBounds(tag: PerRowPriceTag): string {
  const { minItems: min, maxItems: max } = tag;
  if (min !== undefined && max !== undefined) return `${min} to ${max} rows`;
  if (min !== undefined) return `at least ${min} rows`;
  if (max !== undefined) return `at most ${max} rows`;
  return "any number of rows";
}
