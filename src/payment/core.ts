/**
 * The payment core: the x402 V2 server flow of ARCHITECTURE.md §6, free of any transport. It takes a
 * decoded payment payload (the HTTP binding reads PAYMENT-SIGNATURE, the MCP binding
 * `_meta["x402/payment"]`) and returns the outcome as a value, as x402's HTTPProcessResult does:
 * `free` (deliver, nothing to pay), `payment-required` (the 402 body, and the failed settlement if
 * there was one) or `paid` (deliver, with the settlement receipt). The work itself (counting,
 * running the query) is given as functions; the core decides when, and whether, they run.
 *
 * Order of work for a payment, cheapest refusal first:
 *   1. its authorization lives no longer than an offer allows (before anything else);
 *   2. the one-request-per-payment claim (shared by every replica through the store, renewed
 *      while this request works: store/leases.ts);
 *   3. a payment already recorded: served again (replays.ts), or recovered from the chain;
 *   4. the payment was quoted for this resource, and `accepted` equals a current offer (per_row
 *      offers priced from the cached count);
 *   5. local checks: recipient, amount, time window, EIP-712 signature (local-checks.ts);
 *   — none of these cost more than a quote; a payment that can never settle buys no scan —
 *   6. the chain's word on the payer (payer-check.ts): its balance covers the amount, and a
 *      signature only a smart wallet can make comes from one; one read, taking a place in the
 *      client's refused-payment budget — a payment that can never be verified costs no /verify
 *      and no ledger write;
 *   7. the attempt is committed while the facilitator verifies; a provably cheap fixed-price
 *      query may run meanwhile, any other query runs only once the payment is verified;
 *   8. per_row: the executed result must have the rows the payment was priced for, else nothing
 *      is settled and the answer is 402 with the new offers;
 *   9. settle (unless the claim was lost meanwhile: another request may hold the payment now),
 *      record, deliver. A failure before settlement is never charged.
 */
import { ClientGoneError, PaymentIdConflictError, ServerError } from "../errors.ts";
import type { ChainReader } from "./chain.ts";
import type { PaymentEventSink, PaymentRefusal } from "./events.ts";
import type { FacilitatorClient } from "./facilitator.ts";
import { authorizationProblem, signatureCheckedLocally, livesTooLong } from "./local-checks.ts";
import { PAYMENT_MESSAGES as MSG } from "./messages.ts";
import { paymentIdOf, paymentKey, type ExactPaymentPayload } from "./payload.ts";
import { createPayerCheck, type PayerCheck } from "./payer-check.ts";
import { findOffer, offersForMetadata, offersForQuery, paymentRequiredBody, type Offer } from "./pricing.ts";
import { createRecordedPayments, samePayment } from "./replays.ts";
import type { Claim, PaymentStore, SettlementAttempt } from "./store.ts";
import { quotesCountRows } from "./terms.ts";
import type { ExecutedWork, PaidWork, PaymentOutcome, SettlementReceipt } from "./work.ts";

export type { PaidWork, PaymentOutcome, SettlementReceipt } from "./work.ts";

/** x402's reason for a transfer sent whose receipt the facilitator stopped waiting for. */
const SETTLEMENT_PENDING = "settlement_pending";

export interface PaymentCore {
  process(work: PaidWork): Promise<PaymentOutcome>;
}

export interface PaymentCoreDeps {
  facilitator: FacilitatorClient;
  store: PaymentStore;
  chain: ChainReader;
  /** The payer's balance and wallet, read before /verify; by default from `chain` (payer-check.ts). */
  payers?: PayerCheck;
  maxTimeoutSeconds: number;
  /** Times a settled payment is served again (`limits.max_replays`, replays.ts). */
  maxReplays: number;
  onEvent?: PaymentEventSink;
  /** Milliseconds since the epoch; injectable so time rules can be tested. */
  now?: () => number;
}

export function createPaymentCore(deps: PaymentCoreDeps): PaymentCore {
  const opts = { maxTimeoutSeconds: deps.maxTimeoutSeconds };
  const now = deps.now ?? Date.now;
  const nowSeconds = () => BigInt(Math.floor(now() / 1000));
  const emit = deps.onEvent ?? (() => {});
  const payers = deps.payers ?? createPayerCheck(deps.chain, now);

  /** Offers known without any database work: fixed (query) or metadata prices. */
  const offersWithoutWork = (work: PaidWork) =>
    work.query === null ? offersForMetadata(work.tags, opts) : offersForQuery(work.tags, { counted: null, limit: work.limit ?? null }, opts);
  const needsCount = (work: PaidWork) => work.query !== null && quotesCountRows(work.tags);

  /** The complete current offers; counts rows (cached) when a per_row tag needs them. */
  async function currentOffers(work: PaidWork): Promise<Offer[]> {
    if (!needsCount(work)) return offersWithoutWork(work);
    if (work.countRows === undefined) throw new Error("per_row prices need countRows");
    return offersForQuery(work.tags, { counted: await work.countRows(), limit: work.limit ?? null }, opts);
  }

  function required(work: PaidWork, offers: Offer[], reason: PaymentRefusal, error: string): PaymentOutcome {
    emit({ type: "payment.refused", table: work.tableName, reason, detail: error });
    return { kind: "payment-required", body: paymentRequiredBody(work.resource, offers, error, work.extensions) };
  }

  /** 402 with the current offers, or free when there is nothing to pay. */
  async function quote(work: PaidWork, reason: PaymentRefusal, error: string): Promise<PaymentOutcome> {
    const offers = await currentOffers(work);
    return offers.length === 0 ? { kind: "free" } : required(work, offers, reason, error);
  }

  const recorded = createRecordedPayments({ ...deps, opts, now, quote, required, pay: (work, payload, key, id, claim, resumed) => pay(work, payload, key, id, claim, resumed) });

  /** A payment with no settled record: match, check, verify, work, settle, record. */
  /**
   * The offer a new payment pays, after the checks that cost no more than a quote: bound to this
   * resource, `accepted` one of the current offers, the authorization paying it (local-checks.ts).
   * A refusal is the 402 (or `free`) to answer instead.
   */
  async function checkNew(work: PaidWork, payload: ExactPaymentPayload): Promise<{ offer: Offer; offers: Offer[] } | PaymentOutcome> {
    // x402 clients copy the 402's `resource` into the payload: a payment quoted for one resource
    // (for a query, its SQL) is refused for another, even at the same price (ARCHITECTURE.md §6,
    // §12). The signature does not cover `resource`: this guards honest clients, not stolen headers.
    if (payload.resource !== undefined && payload.resource.url !== work.resource.url) return quote(work, "other-resource", MSG.quotedForOther);
    // A fixed offer needs no count; anything else is priced from the (cached) count.
    let offers = offersWithoutWork(work);
    let offer = findOffer(offers, payload.accepted);
    if (offer === undefined && needsCount(work)) {
      offers = await currentOffers(work);
      if (offers.length === 0) return { kind: "free" };
      offer = findOffer(offers, payload.accepted);
    }
    if (offer === undefined) return required(work, offers, "no-matching-offer", MSG.noMatch);
    const problem = await authorizationProblem(payload, offer, nowSeconds());
    if (problem !== null) return required(work, offers, "local-check", MSG.localCheck(problem));
    return { offer, offers };
  }

  /** A payment with no settled record: check, verify, work, settle, record. */
  async function pay(work: PaidWork, payload: ExactPaymentPayload, key: string, paymentId: string | null, claim: Claim, resumed: boolean): Promise<PaymentOutcome> {
    const passed = await checkNew(work, payload);
    if ("kind" in passed) return passed;
    const { offer, offers } = passed;

    // A client whose payments keep being refused causes no more chain reads or /verify calls for a
    // while: each payment that gets this far takes a place in its budget, kept only if it is refused.
    const giveBack = work.verifyBudget?.take();
    // Nothing is sent to the facilitator, or written, for a payer the chain says cannot pay.
    const cannot = await payers.refusal(payload, offer);
    if (cannot !== null) return required(work, offers, cannot.reason, cannot.message);
    // The attempt is committed while the facilitator verifies: both are needed before /settle.
    const verification = deps.facilitator.verify(payload, offer.requirement);
    verification.then((verdict) => verdict.isValid && giveBack?.(), () => giveBack?.());
    /** The verdict, or the facilitator's failure (reported, then thrown). */
    const verdictOf = () =>
      verification.catch((error) => {
        emit({ type: "facilitator.error", endpoint: "verify", message: String((error as Error).message) });
        throw error;
      });
    const notVerified = (verdict: { invalidReason: string; invalidMessage?: string }) => {
      payers.forget(payload, offer);
      return required(work, offers, "not-verified", MSG.notVerified(reasonText(verdict.invalidReason, verdict.invalidMessage)));
    };
    // A smart wallet's signature could not be checked here (local-checks.ts): nothing is written
    // or run for it before the facilitator has verified it.
    const checkedHere = signatureCheckedLocally(payload);
    if (!checkedHere) {
      const verdict = await verdictOf();
      if (!verdict.isValid) return notVerified(verdict);
    }
    const early = checkedHere && offer.rows === null && work.executeEarly === true ? work.execute() : null;
    early?.catch(() => {});
    let ours = false;
    if (!resumed) {
      try {
        await deps.store.begin(attemptFor(work, payload, key, paymentId, offer));
        ours = true;
      } catch (error) {
        // Another payload took this payment id between our check and our insert.
        const named = paymentId === null ? undefined : await deps.store.findByPaymentId(paymentId);
        if (named !== undefined && named.paymentKey !== key) throw new PaymentIdConflictError(paymentId!);
        throw error;
      }
    }
    // Removes the attempt while no money can have moved because of it, and only if this request
    // made it and still holds the payment's claim (the store checks that too).
    const drop = async () => {
      if (ours && !claim.lost) await deps.store.abandon(key, claim);
    };
    let executed: ExecutedWork;
    try {
      const verdict = await verdictOf();
      if (!verdict.isValid) {
        await drop();
        return notVerified(verdict);
      }
      // A query that fails (SQLite error, time limit, row limit) ends here, before any settlement.
      executed = early !== null ? await early : await work.execute();
    } catch (error) {
      await drop();
      throw error;
    }
    const rows = executed.rows;
    if (offer.rows !== null && rows !== offer.rows) {
      await drop();
      const fresh = offersForQuery(work.tags, { counted: rows ?? 0, limit: work.limit ?? null }, opts);
      if (fresh.length === 0) return { kind: "free" };
      return required(work, fresh, "rows-changed", MSG.rowsChanged(offer.rows, rows ?? 0));
    }
    // A client that left while the work ran would pay for a response nobody receives.
    if (work.signal?.aborted) {
      await drop();
      throw new ClientGoneError();
    }
    // The claim ran out while this request worked (the process or the ledger stalled longer than
    // its lease) and another request may be settling the payment now: nothing is sent to /settle
    // from here and nothing charged; the attempt is left to that request.
    if (claim.lost) return required(work, offers, "in-use", MSG.inUse);
    return settle(work, payload, key, offer, offers, executed, claim, ours);
  }

  async function settle(work: PaidWork, payload: ExactPaymentPayload, key: string, offer: Offer, offers: Offer[], executed: ExecutedWork, claim: Claim, ours: boolean): Promise<PaymentOutcome> {
    // A facilitator failure (throws) leaves the attempt `settling`: the money may have moved.
    const result = await deps.facilitator.settle(payload, offer.requirement).catch((error) => {
      emit({ type: "facilitator.error", endpoint: "settle", message: String((error as Error).message) });
      throw error;
    });
    if (result.success) return settled(work, key, offer, executed, { transaction: result.transaction, network: result.network, payer: result.payer, at: new Date(now()) }, "settlement");
    payers.forget(payload, offer);
    // The facilitator did not settle it, but this very payment may be on chain: another request that
    // took over a lapsed claim, or anyone holding the signed authorization, may have submitted it (chain.ts).
    const { from, nonce } = payload.payload.authorization;
    const { network, asset, payTo } = offer.requirement;
    const state = await deps.chain.paymentState({ network, asset, from, nonce, payTo, amount: offer.amount });
    // Dated by its block, as replays.ts and reconcile.ts date a transfer found on chain.
    if (state?.kind === "transferred") return settled(work, key, offer, executed, { transaction: state.transaction, network, payer: from, at: state.minedAt }, "recovery");
    // Removed only on proof that nothing moved for it and nothing will; otherwise kept for the buyer
    // to present again (replays.ts `resume`) and for `payments --reconcile`. An unused nonce proves
    // nothing once the facilitator has sent a transaction: x402's exact EVM facilitator answers
    // `settlement_pending`, with the transaction's hash, when it stops waiting for the receipt, and
    // the transfer may still be mined.
    const sent = (result.transaction ?? "") !== "" || result.errorReason === SETTLEMENT_PENDING;
    const nothingMoved = state?.kind === "consumed" || (state?.kind === "unused" && !sent);
    if (ours && nothingMoved && !claim.lost) await deps.store.abandon(key, claim);
    const settlement: SettlementReceipt = {
      success: false,
      errorReason: result.errorReason,
      transaction: result.transaction ?? "",
      network: result.network,
      ...(result.payer === undefined ? {} : { payer: result.payer }),
    };
    const reason = reasonText(result.errorReason, result.errorMessage);
    const unknown = sent ? MSG.settlementPending(reason, result.transaction ?? "") : MSG.settlementUnknown(reason);
    const refused = required(work, offers, "not-settled", nothingMoved ? MSG.notSettled(reason) : unknown);
    return { ...(refused as Extract<PaymentOutcome, { kind: "payment-required" }>), settlement };
  }

  /**
   * Records a settlement and answers with its receipt; a ledger failure after the money moved is an
   * alert. `at` starts the replay window: when the facilitator answered, or the transfer's block.
   */
  async function settled(work: PaidWork, key: string, offer: Offer, executed: ExecutedWork, receipt: { transaction: string; network: string; payer: string; at: Date }, via: "settlement" | "recovery"): Promise<PaymentOutcome> {
    const { rows, answer } = executed;
    try {
      await deps.store.confirm(key, { transaction: receipt.transaction, payer: receipt.payer, settledAt: receipt.at, rows, answer });
    } catch (error) {
      // The money has moved: say so loudly, with what the operator needs to reconcile by hand.
      const message = `settled payment ${receipt.transaction} (${key}) could not be recorded in the ledger: ${(error as Error).message}`;
      emit({ type: "ledger.alert", paymentKey: key, transaction: receipt.transaction, message });
      throw new ServerError(`The payment was settled (transaction ${receipt.transaction}) but could not be recorded; the operator has been alerted.`);
    }
    emit({
      type: "payment.settled",
      table: work.tableName,
      network: offer.requirement.network,
      asset: offer.requirement.asset,
      amount: offer.amount,
      rows,
      payer: receipt.payer,
      transaction: receipt.transaction,
      via,
    });
    return { kind: "paid", receipt: { success: true, transaction: receipt.transaction, network: receipt.network, payer: receipt.payer } };
  }

  function attemptFor(work: PaidWork, payload: ExactPaymentPayload, key: string, paymentId: string | null, offer: Offer): SettlementAttempt {
    return {
      attemptedAt: new Date(now()),
      tableName: work.tableName,
      resourceUrl: work.resource.url,
      query: work.query,
      rows: offer.rows,
      amount: offer.amount,
      asset: offer.requirement.asset,
      network: offer.requirement.network,
      payer: payload.payload.authorization.from,
      payTo: offer.requirement.payTo,
      paymentKey: key,
      paymentId,
      validBefore: BigInt(payload.payload.authorization.validBefore),
      signedPayload: JSON.stringify(payload.payload),
    };
  }

  return {
    async process(work) {
      const payload = work.payload;
      if (payload === null) return quote(work, "required", MSG.required);
      // The buyer does not choose how long a payment lives (§6 "Replay and races").
      if (livesTooLong(payload, deps.maxTimeoutSeconds, nowSeconds())) return quote(work, "lives-too-long", MSG.livesTooLong(deps.maxTimeoutSeconds));
      const key = paymentKey(payload);
      const paymentId = paymentIdOf(payload);
      // A concurrent duplicate is refused before any database or facilitator work.
      const claim = await deps.store.claim(key);
      if (claim === null) return required(work, offersWithoutWork(work), "in-use", MSG.inUse);
      try {
        if (paymentId !== null) {
          const named = await deps.store.findByPaymentId(paymentId);
          if (named !== undefined && !samePayment(named.paymentKey, named.signedPayload, key, payload)) throw new PaymentIdConflictError(paymentId);
        }
        const record = await deps.store.find(key);
        if (record === undefined) return await pay(work, payload, key, paymentId, claim, false);
        return await recorded.presentedAgain(work, payload, key, paymentId, claim, record);
      } finally {
        if (claim.lost) emit({ type: "payment.claim-lost", table: work.tableName, paymentKey: key });
        // A release that fails (the ledger went away meanwhile) must not replace the outcome: a
        // paid answer would become an error, a "settled but not recorded" alert a plain 503. The
        // claim is no longer renewed, and expires within its lease.
        await claim.release().catch(() => {});
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
