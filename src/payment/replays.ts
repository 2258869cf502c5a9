/**
 * A payment presented again when the store already has a record of it (ARCHITECTURE.md §6 "Replay and
 * races", "Crashes"; DESIGN.md §17 "A replay is the same answer"):
 *
 * - Settled: served again without a new charge only for the very same signed payment, for the same
 *   resource, within maxTimeoutSeconds of its settlement, at most `maxReplays` times, and only with
 *   the answer it bought: the query is read again, held, and its bytes' digest compared with the
 *   one recorded at settlement before anything is sent. The data changed: 402 with the current
 *   offers. A client that lost the response recovers it; the header is not a bearer token that
 *   buys fresh answers, or the resource, forever.
 * - Settling (the answer of /settle was lost, or the process died): the chain is asked (chain.ts).
 *   Transferred: the attempt becomes settled with the answer read now, and the buyer gets it
 *   (within maxTimeoutSeconds of the settlement; per row only for the rows the attempt was priced
 *   for), with no second transfer; a query that fails now is answered with its failure once the
 *   transfer is recorded. Cancelled or spent otherwise: the attempt is removed. Unused or unproven:
 *   the payment is tried again as that same attempt, which is never deleted by this request (an
 *   earlier /settle may still land).
 *
 * A refused request never changes the record (a replay's count excepted).
 */
import { BadRequestError, PaidQueryFailedError, ResultNotHeldError, ServerError } from "../errors.ts";
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
  maxReplays: number;
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

  /** A result that cannot be held now is told as that of a settled payment: "nothing was charged" would be false. */
  const asSettled = (transaction: string) => (error: unknown) => {
    if (error instanceof ResultNotHeldError) throw new ResultNotHeldError(MSG.notHeldAfterSettlement(transaction, deps.maxTimeoutSeconds));
    // The one text of a failure after /verify says nothing was charged: this payment was.
    if (error instanceof PaidQueryFailedError) throw new BadRequestError(MSG.replayFailed(transaction, deps.maxTimeoutSeconds));
    throw error;
  };

  async function replay(work: PaidWork, record: PaymentRecord): Promise<PaymentOutcome> {
    if (record.resourceUrl !== work.resource.url) return deps.quote(work, "other-resource", MSG.otherResource);
    if (deps.now() > record.settledAt.getTime() + deps.maxTimeoutSeconds * 1000) {
      return deps.quote(work, "replay-expired", MSG.replayExpired(deps.maxTimeoutSeconds));
    }
    // A query's answer is served again only in the form it was delivered in: checked before anything is read.
    const answer = record.answer;
    if (work.query !== null && answer !== null && answer.format !== work.format) return deps.quote(work, "replay-changed", MSG.replayFormat(answer.format));
    // Counted before the read: a payment buys at most this many reads beyond its own.
    if (!(await deps.store.countReplay(record.paymentKey, deps.maxReplays))) {
      return deps.quote(work, "replays-exhausted", MSG.replaysExhausted(deps.maxReplays));
    }
    const executed = await work.execute().catch(asSettled(record.transaction));
    if (answer !== null) {
      if (executed.answer?.digest !== answer.digest) return deps.quote(work, "replay-changed", MSG.replayChanged);
    } else if (work.query !== null) {
      // No answer was delivered yet (resume below could not), or an earlier version settled it:
      // per row by count, only for the rows paid for; the first answer delivered is the one kept.
      if (record.rows !== null && executed.rows !== record.rows) {
        const fresh = offersForQuery(work.tags, { counted: executed.rows ?? 0, limit: work.limit ?? null }, deps.opts);
        if (fresh.length === 0) return { kind: "free" };
        return deps.required(work, fresh, "rows-changed", MSG.replayRowsChanged(record.rows, executed.rows ?? 0));
      }
      if (executed.answer !== null) await deps.store.recordAnswer(record.paymentKey, executed.answer, executed.rows);
    }
    emit({ type: "payment.settled", ...settledFacts(work, record), rows: executed.rows, via: "replay" });
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
    const executed = expired ? null : await work.execute().catch((error: unknown) => ((failure = error), null));
    // An attempt records the row count that priced it only for a per_row price by count.
    const rows = executed?.rows ?? null;
    const changed = rows !== null && record.rows !== null && rows !== record.rows;
    const delivered = executed !== null && !changed;
    const transaction = state.transaction;
    try {
      await deps.store.confirm(key, { transaction, payer: record.payer, settledAt, rows: delivered ? rows : record.rows, answer: delivered ? executed.answer : null });
    } catch (error) {
      const message = `payment ${key}, found settled on chain (${transaction}), could not be recorded: ${(error as Error).message}`;
      emit({ type: "ledger.alert", paymentKey: key, transaction, message });
      // The money has moved: never an error that says nothing was charged (as core.ts `settle`).
      throw new ServerError(`The payment was settled (transaction ${transaction}) but could not be recorded; the operator has been alerted.`);
    }
    emit({ type: "payment.settled", ...settledFacts(work, { ...record, transaction }), rows: delivered ? rows : record.rows, via: "recovery" });
    if (failure !== null) return asSettled(transaction)(failure);
    if (expired) return deps.quote(work, "replay-expired", MSG.replayExpired(deps.maxTimeoutSeconds));
    if (changed) {
      const fresh = offersForQuery(work.tags, { counted: rows, limit: work.limit ?? null }, deps.opts);
      if (fresh.length === 0) return { kind: "free" };
      return deps.required(work, fresh, "rows-changed", MSG.replayRowsChanged(record.rows!, rows));
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

function settledFacts(work: PaidWork, record: PaymentRecord) {
  return { table: work.tableName, network: record.network, asset: record.asset, amount: record.amount, payer: record.payer, transaction: record.transaction };
}
