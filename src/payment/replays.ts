/**
 * A payment presented again when the store already has a record of it (ARCHITECTURE.md §6 "Replay and
 * races", "Crashes"):
 *
 * - Settled: served again without a new charge only for the very same signed payment, for the same
 *   resource, within maxTimeoutSeconds of its settlement, and for per_row prices only while the
 *   result still has the rows paid for (a client that lost the response recovers it; the header is
 *   not a bearer token that buys the resource forever).
 * - Settling (the answer of /settle was lost, or the process died): the chain is asked (chain.ts).
 *   Transferred: the attempt becomes settled, and the buyer gets the data under the rules above
 *   (within maxTimeoutSeconds of the settlement, per_row only for the rows paid for), with no second
 *   transfer; a query that fails now is answered with its failure once the transfer is recorded.
 *   Cancelled or spent otherwise: the attempt is removed. Unused or unproven: the payment is tried
 *   again as that same attempt, which is never deleted by this request (an earlier /settle may
 *   still land).
 *
 * A refused request never changes the record.
 */
import { ResultNotHeldError, ServerError } from "../errors.ts";
import type { ChainReader } from "./chain.ts";
import type { PaidWork, PaymentOutcome } from "./work.ts";
import type { PaymentEventSink, PaymentRefusal } from "./events.ts";
import { sameJson } from "./json-equal.ts";
import { PAYMENT_MESSAGES as MSG } from "./messages.ts";
import type { ExactPaymentPayload } from "./payload.ts";
import { offersForQuery, type Offer, type OfferOptions } from "./pricing.ts";
import type { Claim, PaymentRecord, PaymentStore } from "./store.ts";

export interface RecordedPaymentsDeps {
  store: PaymentStore;
  chain: ChainReader;
  maxTimeoutSeconds: number;
  opts: OfferOptions;
  now: () => number;
  onEvent?: PaymentEventSink;
  quote(work: PaidWork, reason: PaymentRefusal, error: string): Promise<PaymentOutcome>;
  required(work: PaidWork, offers: Offer[], reason: PaymentRefusal, error: string): PaymentOutcome;
  /** The ordinary flow; `resumed`: the record exists already and is not this request's to delete. */
  pay(work: PaidWork, payload: ExactPaymentPayload, key: string, paymentId: string | null, claim: Claim, resumed: boolean): Promise<PaymentOutcome>;
}

/** The same payment: same key and the same signed authorization, byte for byte in meaning. */
export function samePayment(recordKey: string, recordSignedPayload: string, key: string, payload: ExactPaymentPayload): boolean {
  return recordKey === key && sameJson(JSON.parse(recordSignedPayload), payload.payload);
}

export function createRecordedPayments(deps: RecordedPaymentsDeps) {
  const emit = deps.onEvent ?? (() => {});

  /**
   * Whether a recorded payment for a query is held to the rows it paid for: unless it paid what one
   * of the query's fixed offers costs now (same amount, asset, network and recipient), it was priced
   * by its rows. Read from the record, never from the `accepted` presented again: the signature
   * does not cover it, so a buyer could name the fixed offer to lift the row check.
   */
  const paidPerRow = (work: PaidWork, record: PaymentRecord) =>
    work.query !== null && !offersForQuery(work.tags, null, deps.opts).some((offer) => paysFixedOffer(record, offer));

  /** A result that cannot be held now is told as that of a settled payment: "nothing was charged" would be false. */
  const asSettled = (transaction: string) => (error: unknown) => {
    throw error instanceof ResultNotHeldError ? new ResultNotHeldError(MSG.notHeldAfterSettlement(transaction, deps.maxTimeoutSeconds)) : error;
  };

  async function replay(work: PaidWork, record: PaymentRecord): Promise<PaymentOutcome> {
    if (record.resourceUrl !== work.resource.url) return deps.quote(work, "other-resource", MSG.otherResource);
    if (deps.now() > record.settledAt.getTime() + deps.maxTimeoutSeconds * 1000) {
      return deps.quote(work, "replay-expired", MSG.replayExpired(deps.maxTimeoutSeconds));
    }
    const rows = await work.execute().catch(asSettled(record.transaction));
    if (paidPerRow(work, record) && record.rows !== null && rows !== record.rows) {
      const fresh = offersForQuery(work.tags, rows ?? 0, deps.opts);
      if (fresh.length === 0) return { kind: "free" };
      return deps.required(work, fresh, "rows-changed", MSG.replayRowsChanged(record.rows, rows ?? 0));
    }
    emit({ type: "payment.settled", ...settledFacts(work, record), rows, via: "replay" });
    return { kind: "paid", receipt: { success: true, transaction: record.transaction, network: record.network, payer: record.payer } };
  }

  async function resume(work: PaidWork, payload: ExactPaymentPayload, key: string, paymentId: string | null, claim: Claim, record: PaymentRecord): Promise<PaymentOutcome> {
    if (record.resourceUrl !== work.resource.url) return deps.quote(work, "other-resource", MSG.pendingElsewhere);
    const { from, nonce } = payload.payload.authorization;
    const state = await deps.chain.paymentState({ network: record.network, asset: record.asset, from, nonce, payTo: record.payTo, amount: record.amount });
    if (state?.kind === "consumed") {
      // Cancelled, or spent by another authorization: this attempt can never move money.
      await deps.store.abandon(key, claim);
      return deps.quote(work, "nonce-used", MSG.nonceConsumed);
    }
    // Unused: settle it now. Unproven (no endpoint, no log): the facilitator decides, and refuses a used nonce.
    if (state?.kind !== "transferred") return deps.pay(work, payload, key, paymentId, claim, true);
    // The transfer happened: the record says so (dated by its block), and the buyer gets what the
    // attempt was for under the rules of any settled payment presented again (`replay`).
    const settledAt = state.minedAt;
    const expired = deps.now() > settledAt.getTime() + deps.maxTimeoutSeconds * 1000;
    // A query that fails now (a limit of this transport, the time limit) does not undo the transfer:
    // it is recorded first, then the failure is answered.
    let failure: unknown = null;
    const rows = expired ? null : await work.execute().catch((error: unknown) => ((failure = error), null));
    const changed = rows !== null && paidPerRow(work, record) && record.rows !== null && rows !== record.rows;
    const recordedRows = rows === null || changed ? record.rows : rows;
    const transaction = state.transaction;
    try {
      await deps.store.confirm(key, { transaction, payer: record.payer, settledAt, rows: recordedRows });
    } catch (error) {
      const message = `payment ${key}, found settled on chain (${transaction}), could not be recorded: ${(error as Error).message}`;
      emit({ type: "ledger.alert", paymentKey: key, transaction, message });
      // The money has moved: never an error that says nothing was charged (as core.ts `settle`).
      throw new ServerError(`The payment was settled (transaction ${transaction}) but could not be recorded; the operator has been alerted.`);
    }
    emit({ type: "payment.settled", ...settledFacts(work, { ...record, transaction }), rows: recordedRows, via: "recovery" });
    if (failure !== null) return asSettled(transaction)(failure);
    if (expired) return deps.quote(work, "replay-expired", MSG.replayExpired(deps.maxTimeoutSeconds));
    if (changed) {
      const fresh = offersForQuery(work.tags, rows ?? 0, deps.opts);
      if (fresh.length === 0) return { kind: "free" };
      return deps.required(work, fresh, "rows-changed", MSG.replayRowsChanged(record.rows!, rows ?? 0));
    }
    return { kind: "paid", receipt: { success: true, transaction, network: record.network, payer: record.payer } };
  }

  return {
    async presentedAgain(work: PaidWork, payload: ExactPaymentPayload, key: string, paymentId: string | null, claim: Claim, record: PaymentRecord): Promise<PaymentOutcome> {
      // Same nonce, another signature or authorization: not this payment.
      if (!samePayment(record.paymentKey, record.signedPayload, key, payload)) return deps.quote(work, "nonce-used", MSG.nonceUsed);
      return record.status === "settled" ? replay(work, record) : resume(work, payload, key, paymentId, claim, record);
    },
  };
}

function paysFixedOffer(record: PaymentRecord, offer: Offer): boolean {
  const { asset, network, payTo } = offer.requirement;
  return (
    offer.amount === record.amount &&
    network === record.network &&
    asset.toLowerCase() === record.asset.toLowerCase() &&
    payTo.toLowerCase() === record.payTo.toLowerCase()
  );
}

function settledFacts(work: PaidWork, record: PaymentRecord) {
  return { table: work.tableName, network: record.network, asset: record.asset, amount: record.amount, payer: record.payer, transaction: record.transaction };
}
