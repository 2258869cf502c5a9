/**
 * One settlement attempt's life in the ledger (DESIGN.md §6): begun (committed durably, before the
 * money can move) → sent to the facilitator's /settle → confirmed, or removed again.
 *
 * The rule that keeps the ledger honest: a row is removed only while no money can have moved
 * because of it — before /settle was asked, or after /settle said it failed — and only if this
 * request created it. A row that was already `settling` (an earlier attempt of the same payment
 * whose outcome is unknown) stays for the operator, whatever happens to this attempt.
 */
import type { Ledger, SettlementAttempt } from "./ledger.ts";

export interface Attempt {
  /** /settle is being asked: from now on only `confirm` or `settlementFailed` end the attempt. */
  sending(): void;
  confirm(settled: { transaction: string; payer: string; settledAt: Date; rows: number | null }): void;
  /** /settle answered `success:false`: nothing moved in this attempt. */
  settlementFailed(): void;
  /** Nothing was sent to /settle (refused, failed, or never delivered): removes the row; idempotent. */
  dropUnlessSent(): void;
}

export function beginAttempt(ledger: Ledger, attempt: SettlementAttempt): Attempt {
  const resumed = ledger.begin(attempt) === "resumed";
  let state: "begun" | "sent" | "done" = "begun";

  const remove = () => {
    state = "done";
    if (resumed) return;
    try {
      ledger.abandon(attempt.paymentKey);
    } catch (error) {
      // The row stays `settling` and is listed as unconfirmed: more to check, nothing forgotten.
      console.error(`arrow402: could not remove the unsettled attempt ${attempt.paymentKey} from the ledger:`, error);
    }
  };

  return {
    sending() {
      state = "sent";
    },
    confirm(settled) {
      state = "done";
      ledger.confirm(attempt.paymentKey, settled);
    },
    settlementFailed() {
      remove();
    },
    dropUnlessSent() {
      if (state === "begun") remove();
    },
  };
}
