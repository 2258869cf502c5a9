/**
 * The store's refusals, worded once for both stores: they are programming or race errors in the
 * payment core (store.ts: an attempt never overwrites a record; only a `settling` attempt is confirmed).
 */
import type { SettlementAttempt } from "../store.ts";

export function alreadyRecorded(attempt: Pick<SettlementAttempt, "paymentKey" | "paymentId">): Error {
  const id = attempt.paymentId === null ? "" : ` or payment id ${attempt.paymentId}`;
  return new Error(`a record already exists for payment ${attempt.paymentKey}${id}: an attempt never overwrites another record`);
}

export function noAttemptInProgress(paymentKey: string): Error {
  return new Error(`no settlement attempt in progress for payment ${paymentKey}: only a settling attempt can be confirmed`);
}
