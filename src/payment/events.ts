/**
 * What the payment core reports as it works, as typed values (as x402's server hooks do): logging
 * and metrics observe these instead of being called from inside the flow.
 */

export type PaymentEvent =
  | {
      type: "payment.settled";
      table: string;
      network: string;
      asset: string;
      amount: bigint;
      rows: number | null;
      payer: string;
      transaction: string;
      /** A settled payment served again (replay), or one confirmed on chain after its answer was lost (recovered). */
      via: "settlement" | "replay" | "recovery";
    }
  | {
      type: "payment.refused";
      table: string;
      /** Why the answer was 402: no payment, a local check, the facilitator's verdict, a failed settlement… */
      reason: PaymentRefusal;
      detail: string;
    }
  | { type: "facilitator.error"; endpoint: "verify" | "settle"; message: string }
  | {
      /**
       * A request's claim on its payment ran out while it worked (the process or the ledger
       * stalled longer than the lease) and was taken over or cleared; the request did not settle
       * after noticing it.
       */
      type: "payment.claim-lost";
      table: string;
      paymentKey: string;
    }
  | {
      /** Money moved (or may have) and the ledger could not record it: the operator must act. */
      type: "ledger.alert";
      paymentKey: string;
      transaction: string;
      message: string;
    };

export type PaymentRefusal =
  | "required"
  | "lives-too-long"
  | "in-use"
  | "no-matching-offer"
  | "local-check"
  | "insufficient-balance"
  | "no-smart-wallet"
  | "not-verified"
  | "rows-changed"
  | "not-settled"
  | "nonce-used"
  | "other-resource"
  | "replay-expired"
  | "replay-changed"
  | "replays-exhausted"
  | "outcome-unknown";

export type PaymentEventSink = (event: PaymentEvent) => void;
