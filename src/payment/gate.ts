/**
 * The payment gate: the x402 V2 server flow of DESIGN.md §6, framework-free. Expected outcomes are
 * values, as in x402's HTTPProcessResult: `free`, `payment-required` (402), or `verified` (do the
 * work, then `settle`, then deliver). The caller always calls `release()` of a verified payment in
 * `finally`: a failure before settlement (query error, timeout, row limit) is never charged.
 */
import type { PaymentRequirements } from "@x402/core/types";
import type { PriceTag } from "../config/types.ts";
import { ServerError } from "../errors.ts";
import { beginAttempt, type Attempt } from "./attempt.ts";
import type { FacilitatorClient } from "./facilitator.ts";
import { sameJson } from "./json-equal.ts";
import type { Ledger, LedgerEntry, SettlementAttempt } from "./ledger.ts";
import { PAYMENT_MESSAGES as MSG } from "./messages.ts";
import {
  findOffer,
  offersForMetadata,
  offersForQuery,
  paymentRequiredBody,
  requirementFor,
  type Offer,
  type PaidResource,
  type PaymentRequiredBody,
} from "./pricing.ts";
import { PAYMENT_REQUIRED, PAYMENT_RESPONSE, decodePaymentSignature, encodeHeaderJson, paymentKey, type ExactPaymentPayload } from "./wire.ts";

export interface GateRequest {
  /** per_row and fixed tags for a query; metadata_price tags for metadata (`query` null). */
  tags: PriceTag[];
  resource: PaidResource;
  /** The raw PAYMENT-SIGNATURE header, or null. */
  paymentSignature: string | null;
  /** `SELECT count(*)` over the query, for the per_row quote (no rows materialised). */
  countRows?: () => Promise<number>;
  /**
   * Executes the query (buffered): before pricing when a per_row offer is presented (the price
   * comes from the actual rows), alongside /verify when a fixed one is. A `verified` result means it
   * has completed; after it has run, any outcome — even `free` — should reuse its result.
   */
  runQuery?: () => Promise<{ rows: number }>;
  /**
   * The query is provably cheap (a small read, db/inline.ts), so a fixed-price one may run while
   * /verify is in flight. Any other query runs only once the payment is verified: a forged header
   * must not make the server scan a table.
   */
  runQueryEarly?: boolean;
  tableName: string;
  /** The SQL; null for the metadata endpoint. */
  query: string | null;
}

export interface PaymentRequiredResult {
  kind: "payment-required";
  body: PaymentRequiredBody;
  /** PAYMENT-REQUIRED (and PAYMENT-RESPONSE after a failed settlement). */
  headers: Record<string, string>;
}

export type SettleOutcome = { kind: "settled"; paymentResponseHeader: string } | PaymentRequiredResult;

export interface VerifiedPayment {
  kind: "verified";
  requirement: PaymentRequirements;
  payer: string;
  /** A settled payment presented again for the same resource: served without a new charge. */
  replay: boolean;
  /** Settles and records the payment; `rows` delivered (null for metadata). */
  settle(info: { rows: number | null }): Promise<SettleOutcome>;
  /** Frees the payment for other requests, and removes its attempt from the ledger if `settle` was never called; idempotent. */
  release(): void;
}

export type GateResult = { kind: "free" } | PaymentRequiredResult | VerifiedPayment;

export interface PaymentGate {
  check(request: GateRequest): Promise<GateResult>;
}

export interface PaymentGateDeps {
  facilitator: FacilitatorClient;
  ledger: Ledger;
  maxTimeoutSeconds: number;
  /** Milliseconds since the epoch; injectable so replay expiry can be tested. */
  now?: () => number;
}

const FREE = { kind: "free" } as const;

export function createPaymentGate(deps: PaymentGateDeps): PaymentGate {
  const opts = { maxTimeoutSeconds: deps.maxTimeoutSeconds };
  const now = deps.now ?? Date.now;
  // One payment is processed by one request at a time (§6 "Replay and races"). One process serves
  // all requests, so an in-memory set is the lock; the ledger's unique key backs it on disk.
  const inFlight = new Set<string>();

  /** Offers known without any database work: fixed (query) or metadata prices. */
  const offersWithoutWork = (req: GateRequest) =>
    req.query === null ? offersForMetadata(req.tags, opts) : offersForQuery(req.tags, null, opts);

  /** The complete current offers; counts rows when a per_row tag needs them. */
  async function currentOffers(req: GateRequest): Promise<Offer[]> {
    if (req.query === null || !req.tags.some((tag) => tag.type === "per_row")) return offersWithoutWork(req);
    if (req.countRows === undefined) throw new Error("The payment gate needs countRows for per_row price tags");
    return offersForQuery(req.tags, await req.countRows(), opts);
  }

  async function quote(req: GateRequest, error: string): Promise<GateResult> {
    const offers = await currentOffers(req);
    return offers.length === 0 ? FREE : paymentRequired(req.resource, offers, error);
  }

  async function decide(req: GateRequest, payload: ExactPaymentPayload, key: string, release: () => void): Promise<GateResult> {
    const settled = deps.ledger.findByKey(key);
    if (settled !== undefined) return replay(req, payload, settled, release);

    let offers = offersWithoutWork(req);
    let offer = findOffer(offers, payload.accepted);
    let complete = req.query === null || !req.tags.some((tag) => tag.type === "per_row");
    // A per_row offer is priced from the actual rows: run the query, then price (spec rule 2).
    if (offer === undefined && req.query !== null && req.runQuery !== undefined && looksPerRow(req.tags, payload.accepted)) {
      const { rows } = await req.runQuery();
      offers = offersForQuery(req.tags, rows, opts);
      if (offers.length === 0) return FREE;
      offer = findOffer(offers, payload.accepted);
      if (offer === undefined) return paymentRequired(req.resource, offers, MSG.noMatchForRows(rows));
      complete = true;
    }
    if (offer === undefined) return quote(req, MSG.noMatch);

    // Three things overlap the /verify round trip, each needed before /settle (DESIGN.md §6):
    // the request to /verify is sent first; then a provably cheap fixed-price query runs, if the
    // signed authorization agrees with the offer (so a header that merely decodes never makes the
    // server work); then the settlement attempt is committed to the ledger (an fsync, blocking
    // this thread while the facilitator works). A refused or failed verification removes the
    // attempt and discards the result: nothing is delivered, nothing is charged.
    const verification = deps.facilitator.verify(payload, offer.requirement);
    const early = offer.rows === null && req.runQuery !== undefined && req.runQueryEarly === true && authorizationAgrees(payload, offer);
    const work = early ? req.runQuery!() : null;
    // Observed below; these keep a rejection that arrives while `begin` throws from going unhandled.
    verification.catch(() => {});
    work?.catch(() => {});
    const attempt = beginAttempt(deps.ledger, settlementAttempt(req, payload, key, offer));
    let payer: string;
    try {
      const verdict = await verification;
      if (!verdict.isValid) {
        attempt.dropUnlessSent();
        const message = MSG.notVerified(reasonText(verdict.invalidReason, verdict.invalidMessage));
        return complete ? paymentRequired(req.resource, offers, message) : quote(req, message);
      }
      payer = verdict.payer;
      // A query that fails (SQLite error, time limit, row limit) ends here, before any settlement.
      if (work !== null) await work;
    } catch (error) {
      attempt.dropUnlessSent();
      throw error;
    }
    const chosen = offer;
    return {
      kind: "verified",
      requirement: chosen.requirement,
      payer,
      replay: false,
      settle: (info) => settle(req, payload, key, chosen, offers, attempt, info),
      release: () => {
        // Released without settling (a failure while delivering, the client gone): not charged.
        attempt.dropUnlessSent();
        release();
      },
    };
  }

  /** What the ledger records before the money can move; `rows` is filled in by `confirm` when not known yet. */
  function settlementAttempt(req: GateRequest, payload: ExactPaymentPayload, key: string, offer: Offer): SettlementAttempt {
    return {
      attemptedAt: new Date(now()),
      tableName: req.tableName,
      resourceUrl: req.resource.url,
      query: req.query,
      rows: offer.rows,
      amount: offer.amount,
      asset: offer.requirement.asset,
      network: offer.requirement.network,
      payer: payload.payload.authorization.from,
      payTo: offer.requirement.payTo,
      paymentKey: key,
      validBefore: BigInt(payload.payload.authorization.validBefore),
      signedPayload: JSON.stringify(payload.payload),
    };
  }

  /**
   * Local checks the facilitator will also make: the authorization pays this offer's amount to its
   * pay_to, and is valid now. Only decides whether the work may start before /verify answers.
   */
  function authorizationAgrees(payload: ExactPaymentPayload, offer: Offer): boolean {
    const { to, value, validAfter, validBefore } = payload.payload.authorization;
    const seconds = BigInt(Math.floor(now() / 1000));
    return (
      to.toLowerCase() === offer.requirement.payTo.toLowerCase() &&
      BigInt(value) === offer.amount &&
      BigInt(validAfter) <= seconds &&
      BigInt(validBefore) > seconds
    );
  }

  async function settle(
    req: GateRequest,
    payload: ExactPaymentPayload,
    key: string,
    offer: Offer,
    offers: Offer[],
    attempt: Attempt,
    info: { rows: number | null },
  ): Promise<SettleOutcome> {
    // The attempt was committed before /verify answered: a crash after settlement leaves an
    // unconfirmed row, never nothing. A facilitator failure (throws) leaves it unconfirmed too:
    // the money may have moved.
    attempt.sending();
    const result = await deps.facilitator.settle(payload, offer.requirement);
    if (!result.success) {
      attempt.settlementFailed();
      const response = encodeHeaderJson({
        success: false,
        errorReason: result.errorReason,
        transaction: result.transaction ?? "",
        network: result.network,
        ...(result.payer === undefined ? {} : { payer: result.payer }),
      });
      const required = paymentRequired(req.resource, offersAfterWork(req, info.rows, offers), MSG.notSettled(reasonText(result.errorReason, result.errorMessage)));
      return { ...required, headers: { ...required.headers, [PAYMENT_RESPONSE]: response } };
    }
    try {
      attempt.confirm({ transaction: result.transaction, payer: result.payer, settledAt: new Date(now()), rows: info.rows });
    } catch (error) {
      // The money has moved: say so loudly, with what the operator needs to reconcile by hand.
      console.error(`arrow402: settled payment ${result.transaction} (${key}) could not be recorded in the ledger:`, error);
      throw new ServerError(`The payment was settled (transaction ${result.transaction}) but could not be recorded; the operator has been alerted.`);
    }
    const header = encodeHeaderJson({ success: true, transaction: result.transaction, network: result.network, payer: result.payer });
    return { kind: "settled", paymentResponseHeader: header };
  }

  /** §6: served again without a new charge only for the same signed payment, same resource, still valid. */
  async function replay(req: GateRequest, payload: ExactPaymentPayload, settled: LedgerEntry, release: () => void): Promise<GateResult> {
    if (!sameJson(JSON.parse(settled.signedPayload), payload.payload)) return quote(req, MSG.nonceUsed);
    if (settled.resourceUrl !== req.resource.url) return quote(req, MSG.otherResource);
    if (BigInt(Math.floor(now() / 1000)) >= settled.validBefore) return quote(req, MSG.expired);
    const header = encodeHeaderJson({ success: true, transaction: settled.transaction, network: settled.network, payer: settled.payer });
    return {
      kind: "verified",
      requirement: payload.accepted,
      payer: settled.payer,
      replay: true,
      settle: async () => ({ kind: "settled", paymentResponseHeader: header }),
      release,
    };
  }

  /** Offers for the 402 after a failed settlement: priced from the delivered rows when known. */
  function offersAfterWork(req: GateRequest, rows: number | null, known: Offer[]): Offer[] {
    if (req.query === null || rows === null || known.some((offer) => offer.rows !== null)) return known;
    try {
      const offers = offersForQuery(req.tags, rows, opts);
      return offers.length > 0 ? offers : known;
    } catch {
      return known; // no tier covers these rows: the fixed offers still apply
    }
  }

  /** Whether `accepted` is one of the per_row tags at some amount (everything but the amount equal). */
  function looksPerRow(tags: PriceTag[], accepted: PaymentRequirements): boolean {
    const amount = BigInt(accepted.amount);
    return tags.some((tag) => tag.type === "per_row" && sameJson(requirementFor(tag, amount, opts), accepted));
  }

  return {
    async check(req) {
      if (req.paymentSignature === null) return quote(req, MSG.required);
      const payload = decodePaymentSignature(req.paymentSignature);
      const key = paymentKey(payload);
      // A concurrent duplicate is refused before any database or facilitator work.
      if (inFlight.has(key)) return paymentRequired(req.resource, offersWithoutWork(req), MSG.inUse);
      inFlight.add(key);
      const release = () => void inFlight.delete(key);
      let handedOver = false;
      try {
        const result = await decide(req, payload, key, release);
        handedOver = result.kind === "verified";
        return result;
      } finally {
        if (!handedOver) release();
      }
    },
  };
}

/**
 * The reason code, with the facilitator's message when it is a short sentence; long messages
 * (e.g. a full RPC error dump) stay out of the 402 body.
 */
function reasonText(code: string, message: string | undefined): string {
  return message !== undefined && message.length <= 160 && !message.includes("\n") ? `${code}: ${message}` : code;
}

function paymentRequired(resource: PaidResource, offers: Offer[], error: string): PaymentRequiredResult {
  const body = paymentRequiredBody(resource, offers, error);
  return { kind: "payment-required", body, headers: { [PAYMENT_REQUIRED]: encodeHeaderJson(body) } };
}
